"""Documents to generate test sets from: loaded from files and folders, or from the user's chunks.

Every document has a stable id that does not depend on its content: the file's path relative to
the folder it was loaded from (``guides/returns.md``), or the id the user gave. Editing a file
or loading the folder again keeps the id, so chunk ids built on it (``guides/returns.md#3``)
stay valid for retrieval metrics.
"""

from __future__ import annotations

import logging
import os
import re
import unicodedata
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from ragmeter._services import check_regular_file
from ragmeter.dataset import DatasetError, Problem

logger = logging.getLogger(__name__)

#: Extensions (lower case) that :func:`load_documents` reads, and the format each maps to.
FORMATS: dict[str, str] = {
    ".txt": "txt",
    ".text": "txt",
    ".md": "md",
    ".markdown": "md",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}


@dataclass(frozen=True)
class Document:
    """One document: its stable ``id``, its plain text (markdown-style headings kept), where it
    came from (``source``, None for user-given chunks), a ``title`` and free ``metadata``."""

    id: str
    text: str
    source: Path | None = None
    title: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SkippedFile:
    """A file (or hidden folder) met while loading a folder and not loaded, with the reason."""

    path: Path
    reason: str


@dataclass(frozen=True)
class LoadedDocuments:
    """What :func:`load_documents` found: the documents, in path order, and what it skipped.

    Iterating over it (or ``len``) goes over the documents.
    """

    documents: list[Document]
    skipped: list[SkippedFile]

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)

    def __len__(self) -> int:
        return len(self.documents)


class DocumentLoadError(ValueError):
    """A file could not be read (bad encoding, broken PDF, unsupported type given by name)."""


def load_documents(
    path_or_paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    recursive: bool = True,
    encoding: str = "utf-8",
) -> LoadedDocuments:
    """Load documents from files and folders.

    Supported: ``.txt``, ``.md`` (text kept as is, title from the first heading), ``.html`` /
    ``.htm`` (text with headings as ``#`` lines and paragraph breaks; scripts and styles
    dropped), ``.pdf`` (needs ``ragmeter[pdf]``) and ``.docx`` (needs ``ragmeter[docx]``).

    A folder is read in sorted path order, into subfolders when ``recursive``. Hidden files and
    folders (``.git``), Office lock files (``~$x.docx``), unknown extensions and files with no
    text (a scanned PDF) are skipped and listed in ``skipped``. A file named directly must be of
    a supported type. A file that cannot be read (a broken PDF or .docx, a named pipe, a
    link to a device) is a :class:`DocumentLoadError` naming it, raised before it is opened
    when it is no regular file (a pipe would block, ``/dev/zero`` would never end).

    A document's id is its path relative to the folder given (``guides/returns.md``), or its
    file name for a file given directly; two arguments that yield the same id are an error.
    Line endings become ``\\n`` and a byte-order mark is dropped.
    """
    if isinstance(path_or_paths, (str, os.PathLike)):
        roots = [Path(path_or_paths)]
    else:
        roots = [Path(p) for p in path_or_paths]

    documents: list[Document] = []
    skipped: list[SkippedFile] = []
    seen: dict[str, Path] = {}
    for root in roots:
        if root.is_dir():
            files, root_skipped = _walk(root, recursive=recursive)
            skipped += root_skipped
            named = [(path, _normalise_id(path.relative_to(root).as_posix())) for path in files]
        elif root.exists():  # a file, or a special one _load_file refuses by name
            if root.suffix.lower() not in FORMATS:
                raise DocumentLoadError(
                    f"{root}: unsupported file type {root.suffix or '(none)'!r}; "
                    f"supported: {', '.join(sorted(FORMATS))}"
                )
            named = [(root, _normalise_id(root.name))]
        else:
            raise FileNotFoundError(f"no such file or folder: {root}")

        for path, doc_id in named:
            if doc_id in seen:
                raise DocumentLoadError(
                    f"two documents would share the id {doc_id!r}: {seen[doc_id]} and {path}. "
                    "Load their common parent folder instead, so ids keep the subfolders."
                )
            seen[doc_id] = path
            document = _load_file(path, doc_id, encoding)
            if document.text.strip():
                documents.append(document)
            else:
                hint = " (a scanned PDF needs OCR first)" if path.suffix.lower() == ".pdf" else ""
                skipped.append(SkippedFile(path, f"no text{hint}"))
                logger.warning("skipped %s: no text%s", path, hint)

    if skipped:
        logger.info("loaded %d document(s), skipped %d file(s)", len(documents), len(skipped))
    return LoadedDocuments(documents, skipped)


def documents_from_chunks(records: Iterable[Mapping[str, Any]]) -> list[Document]:
    """Documents from the user's own chunks, each keeping its id.

    Each record needs ``id`` (a string or an integer) and ``text`` (a string); ``title`` is
    optional and any other field goes into ``metadata``. Every problem (a missing field, a
    duplicate id) is reported at once in a :class:`~ragmeter.DatasetError`, by 1-based row.

    >>> [d.id for d in documents_from_chunks([{"id": "c1", "text": "a"}, {"id": 2, "text": "b"}])]
    ['c1', '2']
    """
    documents: list[Document] = []
    problems: list[Problem] = []
    first_row: dict[str, int] = {}
    for row, record in enumerate(records, start=1):
        if not isinstance(record, Mapping):
            problems.append(
                Problem(row, None, f"expected a mapping, got {type(record).__name__}", _FIX)
            )
            continue
        raw_id, text = record.get("id"), record.get("text")
        usable = isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool)
        doc_id = unicodedata.normalize("NFC", str(raw_id)) if usable else None
        row_problems = []
        if doc_id is None or not doc_id.strip():
            got = "missing" if raw_id is None else f"{raw_id!r}"
            row_problems.append(Problem(row, "id", f"needs a non-empty id, got {got}", _FIX))
        elif doc_id in first_row:
            row_problems.append(
                Problem(
                    row,
                    "id",
                    f"duplicate id {doc_id!r}, first used in row {first_row[doc_id]}",
                    "give every chunk its own id",
                    sample_id=doc_id,
                )
            )
        if not isinstance(text, str):
            got = "missing" if text is None else type(text).__name__
            row_problems.append(
                Problem(row, "text", f"needs a string text, got {got}", _FIX, sample_id=doc_id)
            )
        problems += row_problems
        if doc_id is not None:
            first_row.setdefault(doc_id, row)
        if row_problems:
            continue
        assert doc_id is not None and isinstance(text, str)
        title = record.get("title")
        metadata = {k: v for k, v in record.items() if k not in ("id", "text", "title")}
        documents.append(
            Document(
                doc_id,
                _normalise_text(text),
                title=title if isinstance(title, str) else None,
                metadata=metadata,
            )
        )
    if problems:
        raise DatasetError(problems)
    return documents


_FIX = 'give each chunk as {"id": "...", "text": "..."}'

# Hidden files, and the lock files Office leaves next to an open document.
_HIDDEN_PREFIXES = (".", "~$")


def _walk(root: Path, *, recursive: bool) -> tuple[list[Path], list[SkippedFile]]:
    files: list[Path] = []
    skipped: list[SkippedFile] = []
    for folder, dirnames, filenames in os.walk(root):
        here = Path(folder)
        for name in sorted(dirnames):
            if name.startswith(_HIDDEN_PREFIXES):
                skipped.append(SkippedFile(here / name, "hidden folder"))
            elif not recursive:
                skipped.append(SkippedFile(here / name, "subfolder (recursive=False)"))
        # pruning in place stops os.walk from descending into them
        dirnames[:] = [d for d in dirnames if recursive and not d.startswith(_HIDDEN_PREFIXES)]
        for name in filenames:
            path = here / name
            if name.startswith(_HIDDEN_PREFIXES):
                skipped.append(SkippedFile(path, "hidden file"))
            elif path.suffix.lower() not in FORMATS:
                skipped.append(SkippedFile(path, f"unsupported type {path.suffix or '(none)'!r}"))
            else:
                files.append(path)

    def order(path: Path) -> tuple[str, ...]:
        return path.relative_to(root).parts

    return sorted(files, key=order), sorted(skipped, key=lambda s: order(s.path))


def _normalise_id(name: str) -> str:
    # macOS stores file names decomposed (NFD): the same name must give the same id everywhere
    return unicodedata.normalize("NFC", name)


def _normalise_text(text: str) -> str:
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def _load_file(path: Path, doc_id: str, encoding: str) -> Document:
    fmt = FORMATS[path.suffix.lower()]
    try:
        check_regular_file(
            path,
            what="document",
            fix=f"give the folder or files of the documents only; move {path.name} out of it",
        )
    except ValueError as error:
        raise DocumentLoadError(str(error)) from None
    title: str | None
    metadata: dict[str, Any] = {"format": fmt}
    if fmt in ("txt", "md", "html"):
        try:
            raw = path.read_text(encoding=encoding)
        except UnicodeDecodeError as exc:
            raise DocumentLoadError(
                f"{path}: not valid {encoding} ({exc.reason} at byte {exc.start}); "
                "pass encoding= (e.g. 'gb18030' for older Chinese files)"
            ) from exc
        raw = _normalise_text(raw)
        if fmt == "html":
            text, title = html_to_text(raw)
        else:
            text = raw
            title = first_heading(text) if fmt == "md" else None
    elif fmt == "pdf":
        text, title, metadata["pages"] = _read_pdf(path)
    else:
        text, title = _read_docx(path)
    return Document(doc_id, text, source=path, title=title or path.stem, metadata=metadata)


_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def first_heading(markdown: str) -> str | None:
    """The text of the first ``#`` heading outside code blocks, or None.

    >>> first_heading("```\\n# not a heading\\n```\\n\\n## Returns policy ##\\n")
    'Returns policy'
    """
    in_fence = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (match := _ATX_HEADING.match(line)):
            return match.group(2).strip()
    return None


# ---- HTML -----------------------------------------------------------------------------------

_DROPPED = {"script", "style", "noscript", "template", "svg", "iframe", "object"}
_BLOCKS = {
    "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "blockquote",
    "ul", "ol", "dl", "dt", "dd", "table", "thead", "tbody", "tr", "figure", "figcaption",
    "form", "fieldset", "details", "summary", "address", "hr", "body", "html", "head",
}  # fmt: skip
_HEADINGS = {f"h{level}": level for level in range(1, 7)}


class _HTMLText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.current: list[str] = []
        self.prefix = ""  # "## " inside a heading, "- " inside a list item
        self.dropped = 0  # depth inside script, style, ...
        self.in_pre = 0
        self.in_title = False
        self.title: str | None = None
        self.first_h1: str | None = None

    def flush(self) -> None:
        joined = "".join(self.current)
        if self.in_pre:
            text = joined.strip("\n")
        else:
            lines = (re.sub(r"[ \t\f\v]+", " ", line).strip() for line in joined.split("\n"))
            text = "\n".join(line for line in lines if line)
        self.current = []
        if text.strip():
            self.blocks.append(self.prefix + text)
            # an empty flush keeps the prefix: <li><p>text</p></li> is still a list item
            self.prefix = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROPPED:
            self.dropped += 1
        elif self.dropped:
            return
        elif tag == "title":
            self.in_title = True
        elif tag in _HEADINGS:
            self.flush()
            self.prefix = "#" * _HEADINGS[tag] + " "
        elif tag == "li":
            self.flush()
            self.prefix = "- "
        elif tag == "pre":
            self.flush()
            self.in_pre += 1
        elif tag == "br":
            self.current.append("\n")
        elif tag in ("td", "th"):
            if "".join(self.current).strip():
                self.current.append(" | ")
        elif tag in _BLOCKS:
            self.flush()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _DROPPED:  # a self-closed <script/> has no content to drop
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED:
            self.dropped = max(0, self.dropped - 1)
        elif self.dropped:
            return
        elif tag == "title":
            self.in_title = False
        elif tag in _HEADINGS or tag == "li":
            if tag == "h1" and self.first_h1 is None:
                self.first_h1 = re.sub(r"\s+", " ", "".join(self.current)).strip() or None
            self.flush()
            self.prefix = ""
        elif tag == "pre":
            self.flush()
            self.in_pre = max(0, self.in_pre - 1)
        elif tag in _BLOCKS:
            self.flush()

    def handle_data(self, data: str) -> None:
        if self.dropped:
            return
        if self.in_title:
            self.title = ((self.title or "") + " " + data).strip() or None
        else:
            self.current.append(data if self.in_pre else re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> tuple[str, str | None]:
    """Readable text from HTML, and its title (``<title>``, else the first ``<h1>``).

    Headings become markdown ``#`` lines, list items ``- `` lines, blocks are separated by a
    blank line; scripts, styles and ``<head>`` are dropped.

    >>> html_to_text("<h2>Refunds</h2><p>Within <b>7</b>\\ndays.<script>x()</script></p>")
    ('## Refunds\\n\\nWithin 7 days.', None)
    """
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    parser.flush()
    title = re.sub(r"\s+", " ", parser.title).strip() if parser.title else None
    return "\n\n".join(parser.blocks), title or parser.first_h1


# ---- optional formats -----------------------------------------------------------------------


def _read_pdf(path: Path) -> tuple[str, str | None, int]:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError as exc:
        raise ImportError(f"reading {path.name} needs pypdf: pip install 'ragmeter[pdf]'") from exc
    errors: tuple[type[Exception], ...] = (PyPdfError, *_PARSER_ERRORS)
    try:
        reader = PdfReader(path)
        pages = [_normalise_text(page.extract_text() or "").strip() for page in reader.pages]
        info_title = reader.metadata.title if reader.metadata else None
    except errors as exc:
        raise DocumentLoadError(f"{path}: could not read the PDF: {_said(exc)}") from None
    text = "\n\n".join(page for page in pages if page)
    return text, (info_title or "").strip() or None, len(pages)


def _read_docx(path: Path) -> tuple[str, str | None]:
    try:
        import docx
        from docx.opc.exceptions import OpcError
        from lxml.etree import LxmlError  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ImportError(
            f"reading {path.name} needs python-docx: pip install 'ragmeter[docx]'"
        ) from exc
    try:  # parts are parsed as they are first read: the whole reading is guarded
        return _docx_text(docx.Document(str(path)))
    except (OpcError, LxmlError, *_PARSER_ERRORS) as exc:
        raise DocumentLoadError(f"{path}: could not read the .docx file: {_said(exc)}") from None


#: What a damaged file makes a parser raise, besides its own errors: a cut or corrupted zip
#: member (``zlib.error``, ``EOFError``), a nesting too deep (``RecursionError``), a missing
#: or malformed part or object (pypdf meets one with whatever its code raises there).
_PARSER_ERRORS: tuple[type[Exception], ...] = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    RecursionError,
    KeyError,
    IndexError,
    ValueError,
    TypeError,
    AttributeError,
    AssertionError,
    OSError,
)


def _said(error: BaseException) -> str:
    """One line about ``error``, also for those whose message is empty or huge."""
    if isinstance(error, RecursionError):
        return "its objects are nested too deeply to read"
    text = " ".join(str(error).split())
    return (text[:200] + "...") if len(text) > 200 else (text or type(error).__name__)


def _docx_text(document: Any) -> tuple[str, str | None]:
    from docx.table import Table

    blocks: list[str] = []
    first: str | None = None
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            rows = [" | ".join(cell.text.strip() for cell in row.cells) for row in item.rows]
            blocks.append("\n".join(rows))
            continue
        text = item.text.strip()
        if not text:
            continue
        style = item.style.name if item.style is not None else ""
        level = _docx_heading_level(style)
        if level:
            first = first or text
            blocks.append("#" * level + " " + text)
        elif style.startswith("List"):
            blocks.append("- " + text)
        else:
            blocks.append(text)
    title = (document.core_properties.title or "").strip() or first
    return _normalise_text("\n\n".join(blocks)), title


def _docx_heading_level(style: str) -> int:
    if style == "Title":
        return 1
    match = re.fullmatch(r"Heading (\d)", style)
    return min(int(match.group(1)), 6) if match else 0
