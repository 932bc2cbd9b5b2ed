"""Canonical URLs, plain text from feed HTML, and the content hash that spots the same story
under two URLs. Pure functions: no Django, no network."""

from __future__ import annotations

import hashlib
import html
import re
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

import nh3

# Parameters that identify the click, not the document (campaign, ad and newsletter trackers).
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_ga",
        "_gl",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "ref",
        "ref_src",
        "ref_url",
        "cmpid",
        "ocid",
        "ito",
        "s_cid",
        "at_medium",
        "at_campaign",
        "cmp",
        "smid",
        "spm",
    }
)
TRACKING_PREFIXES = ("utm_", "pk_", "mtm_")
DEFAULT_PORTS = {"http": 80, "https": 443}


class InvalidURL(ValueError):
    pass


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(TRACKING_PREFIXES)


# Redirect wrappers that carry the article's own URL in a query parameter: Google (Alerts feeds,
# search results) links through www.google.<tld>/url?...&url=<article> (older ones use ``q``).
_GOOGLE_HOST = re.compile(r"^(?:www\.)?google\.[a-z.]{2,6}$")


def unwrap_redirect(url: str) -> str:
    """The article's own URL inside a known redirect wrapper, else ``url`` unchanged.

    FeedBurner's ``feedproxy.google.com/~r/...`` links carry no target in the URL: feed entries
    give it as ``feedburner:origLink``, which the feed reader prefers (``ingestion.feeds``)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return url
    host = (parts.hostname or "").lower()
    if parts.path == "/url" and _GOOGLE_HOST.match(host):
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        target = params.get("url") or params.get("q") or ""
        if target.startswith(("http://", "https://")):
            return target
    return url


def canonical_url(url: str, *, keep_fragment: bool = False) -> str:
    """The form under which an article is stored: a redirect wrapper unwrapped, scheme and host
    lowercased, default port, fragment (unless ``keep_fragment``), user info and tracking
    parameters dropped, remaining query parameters sorted, an empty path written as ``/``. Path
    case is kept (servers treat it as significant).

    Raises InvalidURL for anything that is not an absolute http(s) URL.
    """
    url = unwrap_redirect((url or "").strip())
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidURL(f"invalid URL {url!r}: {exc}") from exc
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise InvalidURL(f"not an http(s) URL: {url!r}")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise InvalidURL(f"URL has no host: {url!r}")
    if host.isascii():
        host = host.lower()
    else:
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            host = host.lower()
    netloc = host if ":" not in host else f"[{host}]"
    if port is not None and port != DEFAULT_PORTS[scheme]:
        netloc = f"{netloc}:{port}"
    # Re-quote the path so that "%7E" and "~" (or a raw space and "%20") give one URL.
    path = quote(unquote(parts.path), safe="/:@!$&'()*+,;=-._~") or "/"
    query = ""
    if parts.query:
        query_pairs = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not _is_tracking(k)]
        query = urlencode(sorted(query_pairs), doseq=False)
    return urlunsplit((scheme, netloc, path, query, parts.fragment if keep_fragment else ""))


_BLOCK_BOUNDARY = re.compile(
    r"<\s*(?:br|hr|/?p|/?div|/?li|/?ul|/?ol|/?h[1-6]|/?tr|/?blockquote|/?pre|/?table|/?section|/?article)\b[^>]*>",
    re.IGNORECASE,
)
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_NEWLINES = re.compile(r"\s*\n\s*")
_LOOKS_LIKE_HTML = re.compile(r"<[a-zA-Z!/]|&[#a-zA-Z0-9]+;")
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)(\s[^<>]*)?/?>")
# HTML element names (what nh3 knows, and what it removes outright).
_MORE_ELEMENTS = """html head body script style font iframe link meta form input button section main source video
    audio picture svg noscript label select option textarea title"""
_HTML_ELEMENTS = frozenset(nh3.ALLOWED_TAGS) | frozenset(_MORE_ELEMENTS.split())
_VOID_ELEMENTS = frozenset({"br", "hr", "img", "wbr"})


def _is_markup(match: re.Match[str], text: str) -> bool:
    """A tag is markup when it names an HTML element and is written as markup is: in lower case,
    with attributes, closed somewhere in the text, or a void element. An upper-case bracketed name
    without any of these is text: a wire story's ticker ("TEXACO <TX>", "MCLEAN'S <MII>")."""
    closing, name, attributes = match.group(1), match.group(2), match.group(3)
    lowered = name.lower()
    if lowered not in _HTML_ELEMENTS:
        return False
    return name.islower() or bool(closing) or bool(attributes) or lowered in _VOID_ELEMENTS or f"</{name}>" in text


def strip_tags(text: str) -> str:
    """``text`` with its HTML markup replaced by spaces and runs of white space collapsed; bracketed
    names that are not markup (tickers) are kept. Entities are left as they are."""
    return " ".join(_TAG.sub(lambda m: " " if _is_markup(m, text) else m.group(0), text).split())


def _escape_names(text: str) -> str:
    """Bracketed names that are not markup, escaped so that the sanitiser keeps them as text."""
    return _TAG.sub(lambda m: m.group(0) if _is_markup(m, text) else html.escape(m.group(0)), text)


def _has_markup(text: str) -> bool:
    return any(_is_markup(m, text) for m in _TAG.finditer(text))


def _clean(value: str, *, strip_comments: bool = True) -> str:
    marked = _BLOCK_BOUNDARY.sub("\n", _escape_names(value))
    cleaned = nh3.clean(marked, tags=set(), clean_content_tags={"script", "style"}, strip_comments=strip_comments)
    return html.unescape(cleaned)


def html_to_text(value: str) -> str:
    """Plain text of an HTML fragment: tags removed (script/style with their content),
    entities decoded, block elements become line breaks, whitespace collapsed. A bracketed name
    that is not markup, such as a ticker symbol, stays."""
    if not value:
        return ""
    if not _LOOKS_LIKE_HTML.search(value):
        return _normalise_space(value)
    # nh3 re-escapes text; one unescape gives the characters, a second pass catches feeds that
    # double-escape their HTML (e.g. "&amp;amp;").
    text = _clean(value)
    if _has_markup(text):
        text = _clean(text, strip_comments=False)
    return _normalise_space(text)


def _normalise_space(text: str) -> str:
    text = _SPACES.sub(" ", text)
    return _NEWLINES.sub("\n", text).strip()


_HASH_SPACE = re.compile(r"\s+")


def normalise_for_hash(text: str) -> str:
    return _HASH_SPACE.sub(" ", text).strip().casefold()


def content_hash(title: str, body: str, *, url: str = "") -> str:
    """SHA-256 of the normalised title and body: the same story under two URLs hashes alike.

    With no body text a title alone is too weak an identity ("Daily briefing"), so the
    canonical URL joins the hash and only the same URL dedupes.
    """
    body_norm = normalise_for_hash(body)
    parts = [normalise_for_hash(title), body_norm]
    if not body_norm:
        parts.append(url)
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
