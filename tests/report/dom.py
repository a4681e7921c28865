"""A minimal DOM from the standard library's HTML parser, for assertions on the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser

VOID = {"br", "col", "hr", "img", "input", "link", "meta", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def outer_html(self) -> str:
        """The element written out again (attribute and text escaped), for a page of its own."""
        inner = "".join(
            escape(c, quote=False) if isinstance(c, str) else c.outer_html() for c in self.children
        )
        if self.tag == "#document":
            return inner
        attrs = "".join(f' {k}="{escape(v)}"' for k, v in self.attrs.items())
        return (
            f"<{self.tag}{attrs}>"
            if self.tag in VOID
            else f"<{self.tag}{attrs}>{inner}</{self.tag}>"
        )

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def find_all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        wanted = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag)
            and all(
                v in n.attrs.get(k, "").split() if k == "class" else n.attrs.get(k) == v
                for k, v in wanted.items()
            )
        ]

    def find(self, tag: str | None = None, **attrs: str) -> Node:
        found = self.find_all(tag, **attrs)
        assert found, f"no <{tag}> with {attrs}"
        return found[0]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document")
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    """The document tree; fails on a mismatched end tag."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    assert builder.stack == [builder.root], "unclosed elements"
    return builder.root
