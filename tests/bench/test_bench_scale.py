"""bench.bench_scale's discovery: which URLs it measures, and how it tells keyset pages from offsets."""

from __future__ import annotations

from bench.bench_scale import _api_lists, _is_keyset


def test_every_api_list_is_found_without_arguments() -> None:
    lists = list(_api_lists())
    assert "/api/v1/orders/" in lists
    assert "/api/v1/inventory/components/" in lists
    assert "/api/v1/builds/connectors/" in lists
    assert all(url.startswith("/api/v1/") and url.endswith("/") for url in lists)
    assert not any("<" in url or "(" in url for url in lists)
    assert len(lists) == len(set(lists))


def test_a_keyset_link_has_a_cursor_and_no_offset() -> None:
    assert _is_keyset("http://testserver/api/v1/inventory/components/?cursor=cD0xMjM%3D&limit=50")
    # Limit/offset pages carry a given empty `cursor=` along without reading it.
    assert not _is_keyset("http://testserver/api/v1/inventory/components/?cursor=&limit=50&offset=50")
    assert not _is_keyset("http://testserver/api/v1/orders/?limit=50&offset=50")
    assert not _is_keyset(None)
