"""Text from data (a claims file's cells, a ledger's columns, an archive's fields, costs.csv's cells) as it goes
into a Markdown page the book renders: always text, never markup. Every writer of Markdown passes such strings
through `text`, and only its own markup around them stays markup.

MyST reads more than Markdown: roles (``{download}`path` ``, which copies the file it names into the book), directives,
substitutions (``{{ x }}``), dollar math, links and images (a link to a local file is published as a download), raw
HTML. `text` escapes HTML (``<`` ``>`` ``&``) and puts a backslash before every character that opens one of these
inline (CommonMark lets any ASCII punctuation be escaped so); newlines become spaces, so that no data line starts a
block (a directive's fence, a target, a heading)."""
from __future__ import annotations

import html
import re

_OPENS = re.compile(r"([\\`*{}\[\]$|!~^])")  # code and roles, emphasis, substitutions, links and images, math, cells


def text(value) -> str:
    """`value` as Markdown text that MyST shows as written (see the module's docstring)."""
    s = " ".join(str(value).splitlines()).replace("\r", " ")
    return _OPENS.sub(r"\\\1", html.escape(s, quote=False))


_TAG = re.compile(r"<(?=[A-Za-z/!?])")  # the start of an HTML tag, comment or declaration
_ROLE = re.compile(r"\{([^{}`\n]*)\}(?=`)")  # a MyST role's name before its backticks
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})(?=\s*\{)", re.M)  # a directive's opening fence
_LOCAL_LINK = re.compile(r"(!?)\[(?=[^\]]*\]\((?!https?://|#))")  # a link or image to anything but a web address
_SUBSTITUTION = re.compile(r"\{\{")


def prose(md: str) -> str:
    """A Markdown text written by hand (a notebook's markdown cell) with what could run script or pull a file into
    the book shown as text: raw HTML tags, MyST roles, directive fences, substitutions, and links or images to
    anything but a web address (a link to a local file is published as a download). The rest (emphasis, math, code,
    tables, web links) stays as written."""
    md = _TAG.sub("&lt;", md)
    md = _ROLE.sub(lambda m: "\\{" + m.group(1) + "\\}", md)
    md = _FENCE.sub(lambda m: m.group(1) + "\\" + m.group(2), md)
    md = _SUBSTITUTION.sub("\\{\\{", md)
    return _LOCAL_LINK.sub(lambda m: ("\\!" if m.group(1) else "") + "\\[", md)
