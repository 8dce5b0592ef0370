"""The approval pages as HTML: made for a phone (one column, large buttons, arguments wrapped,
never scrolled sideways), no script at all, every value escaped. No HTTP library here: the
server (goldfive.phone.server) sends what these functions return."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from goldfive.phone.items import Action, Item

__all__ = ["CSP", "index_page", "item_page", "message_page"]

#: The pages' Content-Security-Policy: no script, no other origin, forms only to this server.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

_STYLE = """
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;padding:16px;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
 color:#1b1f24;background:#f6f7f9;max-width:640px;margin-inline:auto;overflow-wrap:anywhere}
h1{font-size:1.25rem;margin:.2rem 0 1rem}
.who{color:#57606a;font-size:.9rem;margin:0 0 .75rem}
dl{margin:0 0 1rem;display:grid;grid-template-columns:max-content 1fr;gap:.3rem .8rem}
dt{color:#57606a}dd{margin:0;min-width:0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;word-break:break-word;background:#fff;border:1px solid #d0d7de;
 border-radius:8px;padding:.75rem;margin:0 0 1rem;font:14px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;max-width:100%}
form{margin:0 0 .9rem;background:#fff;border:1px solid #d0d7de;border-radius:10px;padding:.75rem}
label{display:block;color:#57606a;font-size:.9rem;margin:0 0 .3rem}
input[type=text],input[type=number],textarea{width:100%;font:inherit;padding:.55rem;border:1px solid #d0d7de;border-radius:6px;margin:0 0 .6rem}
textarea{min-height:9rem;font:14px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
button{width:100%;font:inherit;font-weight:600;padding:.8rem;border-radius:8px;border:1px solid #8c959f;background:#eaeef2;color:#1b1f24}
button.primary{background:#1f883d;border-color:#1a7f37;color:#fff}
button.danger{background:#fff;border-color:#cf222e;color:#cf222e}
.note{border-radius:8px;padding:.75rem;margin:0 0 1rem;background:#fff8c5;border:1px solid #d4a72c}
.bad{background:#ffebe9;border-color:#cf222e}
.ok{background:#dafbe1;border-color:#1a7f37}
ul{padding:0;list-style:none}li{background:#fff;border:1px solid #d0d7de;border-radius:10px;padding:.75rem;margin:0 0 .6rem}
a{color:#0969da}
"""


def _doc(title: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="same-origin">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>{body}</body></html>\n"
    )


def message_page(title: str, text: str, *, tone: str = "") -> str:
    """A page that only says something: a used or expired link, a decision made, a refusal."""
    cls = f"note {tone}".strip()
    return _doc(f"goldfive: {title}", f"<h1>{escape(title)}</h1><p class=\"{cls}\">{escape(text)}</p>")


def _form(action: Action, url: str, csrf: str) -> str:
    fields = "".join(_field(f.name, f.label, f.widget, f.value, f.required) for f in action.fields)
    return (
        f'<form method="post" action="{escape(url)}">'
        f'<input type="hidden" name="csrf" value="{escape(csrf)}">'
        f'<input type="hidden" name="action" value="{escape(action.name)}">'
        f'{fields}<button type="submit" class="{escape(action.style)}">{escape(action.label)}</button></form>'
    )


def _field(name: str, label: str, widget: str, value: str, required: bool) -> str:
    ident = f"f-{escape(name)}"
    need = " required" if required else ""
    if widget == "textarea":
        control = f'<textarea id="{ident}" name="{escape(name)}"{need} spellcheck="false" autocapitalize="off">{escape(value)}</textarea>'
    else:
        kind = "number" if widget == "number" else "text"
        control = f'<input id="{ident}" type="{kind}" name="{escape(name)}" value="{escape(value)}"{need}>'
    return f'<label for="{ident}">{escape(label)}</label>{control}'


def item_page(item: Item, *, url: str, csrf: str, to: str, refusal: str = "", error: str = "") -> str:
    """One item: what it is, then its actions (none when ``refusal`` says this link may not
    decide it). ``error``: what was wrong with the last submission (nothing was sent)."""
    parts = [f"<h1>{escape(item.title)}</h1>", f'<p class="who">run {escape(item.run_id[:12])} · deciding as {escape(to)}</p>']
    if error:
        parts.append(f'<p class="note bad" role="alert">{escape(error)}</p>')
    parts.append("<dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in item.facts) + "</dl>")
    if item.code:
        parts.append(f'<pre aria-label="arguments">{escape(item.code)}</pre>')
    if refusal:
        parts.append(f'<p class="note bad">{escape(refusal)}</p>')
    else:
        parts.extend(_form(action, url, csrf) for action in item.actions)
    return _doc(f"goldfive: {item.title}", "".join(parts))


def index_page(items: Sequence[tuple[Item, str]], who: str) -> str:
    """Everything waiting, oldest first, each with a link to decide it (issued to ``who``)."""
    if not items:
        body = "<h1>Nothing waits for you</h1><p class=\"who\">signed in as " + escape(who) + "</p>"
        return _doc("goldfive: nothing waits", body)
    rows = []
    for item, url in items:
        facts = " · ".join(escape(v) for k, v in item.facts if k in ("task", "reached", "waiting"))
        rows.append(f'<li><a href="{escape(url)}">{escape(item.title)}</a><br><span class="who">run {escape(item.run_id[:12])} · {facts}</span></li>')
    body = f'<h1>{len(items)} waiting</h1><p class="who">signed in as {escape(who)}</p><ul>{"".join(rows)}</ul>'
    return _doc(f"goldfive: {len(items)} waiting", body)
