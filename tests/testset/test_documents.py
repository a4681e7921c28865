"""Loading documents: every format, folders with a skip list, stable ids, the user's chunks."""

import logging
import os

import pytest

from ragmeter import DatasetError
from ragmeter.testset import (
    Document,
    DocumentLoadError,
    documents_from_chunks,
    load_documents,
)


def write(path, text, encoding="utf-8"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding=encoding)
    return path


def test_text_and_markdown(tmp_path):
    write(tmp_path / "notes.txt", "\ufeffline one\r\nline two\r\n")
    write(tmp_path / "faq.md", "```sh\n# not the title\n```\n\n# 退货政策\n\n七天内可退货。\n")
    loaded = load_documents(tmp_path)
    by_id = {d.id: d for d in loaded}
    assert list(by_id) == ["faq.md", "notes.txt"]
    faq, notes = by_id["faq.md"], by_id["notes.txt"]
    assert faq.title == "退货政策" and "# 退货政策\n\n七天内可退货。" in faq.text
    assert faq.metadata == {"format": "md"} and faq.source == tmp_path / "faq.md"
    assert notes.text == "line one\nline two\n" and notes.title == "notes"


def test_html_keeps_headings_paragraphs_and_lists_and_drops_scripts(tmp_path):
    html = """<html><head><title>Returns &amp; refunds</title><style>p {x: 1}</style></head>
    <body><nav><script>track()</script></nav>
    <h1>Returns</h1><p>Items can be   returned
    within <b>30</b> days.</p>
    <h2>Refunds</h2><ul><li><p>Card: 5 days</p></li><li>Cash: same day</li></ul>
    <p>Line<br>break</p><pre>code  stays
  indented</pre><table><tr><th>A</th><th>B</th></tr></table></body></html>"""
    write(tmp_path / "page.html", html)
    [doc] = load_documents(tmp_path / "page.html")
    assert doc.title == "Returns & refunds"
    assert doc.text == (
        "# Returns\n\nItems can be returned within 30 days.\n\n## Refunds\n\n"
        "- Card: 5 days\n\n- Cash: same day\n\nLine\nbreak\n\ncode  stays\n  indented\n\nA | B"
    )
    assert "track" not in doc.text and "{x: 1}" not in doc.text


def test_html_title_falls_back_to_the_first_h1(tmp_path):
    write(tmp_path / "page.html", "<h2>b</h2><h1>First  one</h1><h1>two</h1>")
    [doc] = load_documents(tmp_path / "page.html")
    assert doc.title == "First one"


def pdf_bytes(stream: bytes) -> bytes:
    """A one-page PDF whose page draws ``stream`` (Helvetica as F1), written by hand."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def test_pdf(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    # A one-page PDF with a text layer, written by hand: pypdf writes pages but not text.
    stream = b"BT /F1 12 Tf 72 720 Td (Refunds take seven days.) Tj ET"
    (tmp_path / "guide.pdf").write_bytes(pdf_bytes(stream))
    blank = pypdf.PdfWriter()
    blank.add_blank_page(width=100, height=100)
    with open(tmp_path / "scan.pdf", "wb") as handle:
        blank.write(handle)

    loaded = load_documents(tmp_path)
    [doc] = loaded.documents
    assert doc.id == "guide.pdf" and "Refunds take seven days." in doc.text
    assert doc.metadata == {"format": "pdf", "pages": 1} and doc.title == "guide"
    assert [(s.path.name, s.reason) for s in loaded.skipped] == [
        ("scan.pdf", "no text (a scanned PDF needs OCR first)")
    ]


def test_docx(tmp_path):
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.core_properties.title = ""
    document.add_heading("退货政策", level=1)
    document.add_paragraph("七天内可退货。")
    document.add_heading("Refunds", level=2)
    document.add_paragraph("Card refunds", style="List Bullet")
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "A", "B"
    document.save(tmp_path / "policy.docx")
    [doc] = load_documents(tmp_path / "policy.docx")
    assert doc.title == "退货政策"
    assert doc.text == "# 退货政策\n\n七天内可退货。\n\n## Refunds\n\n- Card refunds\n\nA | B"


def test_missing_optional_library_names_the_extra(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pypdf(name, *args, **kwargs):
        if name.startswith("pypdf"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pypdf)
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.4")
    with pytest.raises(ImportError, match=r"ragmeter\[pdf\]"):
        load_documents(tmp_path / "a.pdf")


def test_folder_recursion_order_and_skip_list(tmp_path, caplog):
    for name in ["b.md", "a/z.txt", "a/deep/y.md", "a.txt", ".hidden.md", "~$lock.docx", "x.png"]:
        write(tmp_path / name, "text")
    write(tmp_path / ".git" / "config.md", "text")
    write(tmp_path / "empty.md", "  \n")
    with caplog.at_level(logging.INFO, logger="ragmeter.testset._documents"):
        loaded = load_documents(tmp_path)
    assert [d.id for d in loaded] == ["a/deep/y.md", "a/z.txt", "a.txt", "b.md"]
    assert len(loaded) == 4
    assert {s.path.relative_to(tmp_path).as_posix(): s.reason for s in loaded.skipped} == {
        ".git": "hidden folder",
        ".hidden.md": "hidden file",
        "~$lock.docx": "hidden file",
        "x.png": "unsupported type '.png'",
        "empty.md": "no text",
    }
    assert "skipped 5 file(s)" in caplog.text

    flat = load_documents(tmp_path, recursive=False)
    assert [d.id for d in flat] == ["a.txt", "b.md"]
    assert ("a", "subfolder (recursive=False)") in [(s.path.name, s.reason) for s in flat.skipped]


def test_ids_are_stable_and_independent_of_content(tmp_path):
    write(tmp_path / "docs" / "faq.md", "# FAQ\n\nv1")
    first = load_documents(tmp_path)
    write(tmp_path / "docs" / "faq.md", "# FAQ\n\nv2, edited")
    write(tmp_path / "docs" / "new.md", "new")
    second = load_documents([str(tmp_path)])
    assert first.documents[0].id == second.documents[0].id == "docs/faq.md"
    assert [d.id for d in load_documents(tmp_path / "docs")] == ["faq.md", "new.md"]


def test_colliding_ids_and_bad_paths_are_errors(tmp_path):
    write(tmp_path / "a" / "faq.md", "one")
    write(tmp_path / "b" / "faq.md", "two")
    with pytest.raises(DocumentLoadError, match=r"share the id 'faq\.md'"):
        load_documents([tmp_path / "a", tmp_path / "b"])
    with pytest.raises(FileNotFoundError, match="nope"):
        load_documents(tmp_path / "nope")
    with pytest.raises(DocumentLoadError, match=r"unsupported file type '\.png'"):
        load_documents(write(tmp_path / "x.png", "img"))


def test_wrong_encoding_names_the_file_and_the_fix(tmp_path):
    path = write(tmp_path / "gbk.txt", "退货政策", encoding="gbk")
    with pytest.raises(DocumentLoadError, match=r"gbk\.txt: not valid utf-8.*encoding="):
        load_documents(path)
    assert load_documents(path, encoding="gbk").documents[0].text == "退货政策"


def test_documents_from_chunks_keeps_ids_and_fields():
    docs = documents_from_chunks(
        [{"id": "c-1", "text": "a\r\nb", "title": "T", "page": 3}, {"id": 7, "text": ""}]
    )
    assert docs == [
        Document("c-1", "a\nb", title="T", metadata={"page": 3}),
        Document("7", ""),
    ]


def test_documents_from_chunks_reports_every_problem_by_row():
    records = [
        {"id": "c1", "text": "a"},
        {"id": "c2", "text": "b"},
        {"id": "c1", "text": "again"},
        {"text": "no id"},
        {"id": "c3", "text": 5},
        "not a record",
    ]
    with pytest.raises(DatasetError) as caught:
        documents_from_chunks(records)
    problems = [(p.row, p.field) for p in caught.value.problems]
    assert problems == [(3, "id"), (4, "id"), (5, "text"), (6, None)]
    assert "row 3, id 'c1', field 'id': duplicate id 'c1', first used in row 1" in str(caught.value)


# ---- hostile files: special files, damaged archives, absurd nesting --------------------------


def bounded_load(path, timeout=60):
    """``load_documents(path)`` in a child process with a time and a memory bound, so that a
    pipe that blocks or a device that never ends fails the test instead of hanging it:
    ("ok", ids) or (the exception's class name, its message)."""
    import json
    import subprocess
    import sys

    code = (
        "import json, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from ragmeter.testset import load_documents\n"
        "try:\n"
        "    got = ('ok', [d.id for d in load_documents(sys.argv[1])])\n"
        "except Exception as error:\n"
        "    got = (type(error).__name__, str(error))\n"
        "print(json.dumps(got))\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading {path} did not end within {timeout} s")
    assert done.returncode == 0, done.stderr[-2000:]
    return tuple(json.loads(done.stdout))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("given", ["folder", "file"])
@pytest.mark.parametrize("special", ["fifo", "dev-zero-link", "dev-null-link"])
def test_a_special_file_is_refused_by_name_before_it_is_opened(tmp_path, given, special):
    folder = tmp_path / "docs"
    write(folder / "good.md", "# Good\n\nReadable.")
    name = "pipe.md" if special == "fifo" else "zero.txt"
    path = folder / name
    if special == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero" if special == "dev-zero-link" else os.devnull)
    kind, said = bounded_load(folder if given == "folder" else path)
    assert kind == "DocumentLoadError", said
    assert name in said and ("named pipe" in said or "device" in said), said
    assert "Fix:" in said and "\n" not in said


def docx_bytes(tmp_path):
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.add_heading("Returns", level=1)
    document.add_paragraph("Refunds take seven days. " * 200)
    document.save(tmp_path / "source.docx")
    return (tmp_path / "source.docx").read_bytes()


def rezipped(original: bytes, part: str, change) -> bytes:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(original)) as source:
        contents = {name: source.read(name) for name in source.namelist()}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in contents.items():
            target.writestr(name, change(data) if name == part else data)
    return out.getvalue()


def damaged_docx(tmp_path):
    """(name, bytes) of .docx files damaged every way a copy or a tool can damage one."""
    import random

    original = docx_bytes(tmp_path)
    cases = [(f"cut-at-{cut}", original[:cut]) for cut in range(0, len(original), 997)]
    body = b"<w:body>"
    cases += [
        ("xml-cut", rezipped(original, "word/document.xml", lambda x: x[: len(x) // 2])),
        ("xml-garbage", rezipped(original, "word/document.xml", lambda x: b"\x00\xff<<")),
        (
            "xml-nested",
            rezipped(
                original,
                "word/document.xml",
                lambda x: x[: x.index(body)] + body + b"<w:tbl>" * 100_000,
            ),
        ),
        ("styles-cut", rezipped(original, "word/styles.xml", lambda x: x[: len(x) // 2])),
        ("types-cut", rezipped(original, "[Content_Types].xml", lambda x: x[:40])),
    ]
    chance = random.Random(37)
    for number in range(30):  # bytes overwritten inside the compressed parts
        at = chance.randrange(len(original) - 40)
        cases.append((f"overwritten-{number}", original[:at] + b"\x55" * 30 + original[at + 30 :]))
    return cases


def test_a_damaged_docx_is_a_document_load_error_naming_it(tmp_path):
    wrong = {}
    for name, data in damaged_docx(tmp_path):
        path = tmp_path / f"{name}.docx"
        path.write_bytes(data)
        try:
            load_documents(path)
        except DocumentLoadError as error:
            if path.name not in str(error) or "\n" in str(error):
                wrong[name] = str(error)
        except Exception as error:  # noqa: BLE001 -- any other exception is the failure shown
            wrong[name] = repr(error)[:200]
    assert not wrong, wrong


def test_a_pdf_nested_too_deeply_is_a_document_load_error_naming_it(tmp_path):
    pytest.importorskip("pypdf")
    nested = b"[" * 100_000 + b"]" * 100_000
    stream = b"BT /F1 12 Tf 72 720 Td (Hi) Tj ET " + nested + b" Tj"
    path = tmp_path / "nested.pdf"
    path.write_bytes(pdf_bytes(stream))
    with pytest.raises(DocumentLoadError, match=r"nested\.pdf: could not read the PDF: .*nested"):
        load_documents(path)
