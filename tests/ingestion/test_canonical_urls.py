"""Canonical URL rules: one story, one URL."""

from __future__ import annotations

import pytest

from ingestion.canonical import InvalidURL, canonical_url


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTPS://News.Example.ORG/Story", "https://news.example.org/Story"),  # path case kept
        ("https://example.org/a#section-2", "https://example.org/a"),
        ("https://example.org/a?utm_source=rss&utm_medium=feed&utm_campaign=x", "https://example.org/a"),
        ("https://example.org/a?fbclid=1&gclid=2&mc_cid=3&mc_eid=4&ref=home&id=7", "https://example.org/a?id=7"),
        ("https://example.org/a?UTM_Source=x&msclkid=9&_ga=1", "https://example.org/a"),
        ("https://example.org/a?z=1&b=2&a=3", "https://example.org/a?a=3&b=2&z=1"),
        ("https://example.org/a?b=2&a=", "https://example.org/a?a=&b=2"),
        ("http://example.org:80/a", "http://example.org/a"),
        ("https://example.org:443/a", "https://example.org/a"),
        ("https://example.org:8443/a", "https://example.org:8443/a"),
        ("https://example.org", "https://example.org/"),
        ("https://user:secret@example.org/a", "https://example.org/a"),
        ("https://example.org/caf%C3%A9/%7Euser", "https://example.org/caf%C3%A9/~user"),
        ("  https://example.org/a  ", "https://example.org/a"),
        ("https://bücher.example/", "https://xn--bcher-kva.example/"),
    ],
)
def test_canonical_url(raw: str, expected: str) -> None:
    assert canonical_url(raw) == expected


def test_canonical_url_is_idempotent() -> None:
    once = canonical_url("HTTPS://Example.org:443/x/%7Ey?utm_term=a&q=search+term&b=2#top")
    assert canonical_url(once) == once


@pytest.mark.parametrize("raw", ["", "ftp://example.org/a", "mailto:a@example.org", "/relative/path", "https://"])
def test_non_http_urls_are_rejected(raw: str) -> None:
    with pytest.raises(InvalidURL):
        canonical_url(raw)
