"""Reading the page the browser built: elements and their attributes (html.parser, stdlib)."""

from __future__ import annotations

from html.parser import HTMLParser


class Elements(HTMLParser):
    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, {k: v or "" for k, v in attrs}))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_data(self, data):
        self.text.append(data)

    def all(self, tag: str, **want) -> list[dict]:
        """Elements ``tag`` whose attributes hold ``want`` (class_ matches one class)."""
        out = []
        for name, attrs in self.found:
            if name != tag:
                continue
            ok = True
            for key, value in want.items():
                if key == "class_":
                    ok &= value in attrs.get("class", "").split()
                elif value is True:
                    ok &= key.replace("_", "-") in attrs
                else:
                    ok &= attrs.get(key.replace("_", "-")) == value
            if ok:
                out.append(attrs)
        return out

    def root(self) -> dict:
        return next(attrs for name, attrs in self.found if name == "html")
