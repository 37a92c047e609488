"""The marshal cache of the encoding tables (encoder/table_cache.py) gives exactly the forms
the JSON describes, is rebuilt when stale or corrupt, and is optional when unwritable."""
from __future__ import annotations

import json
import os

from ptx2sass.encoder import codec, table_cache

JSON = os.path.join(codec.TABLES, "ampere.json")


def _from_json() -> list:
    with open(JSON) as fh:
        return [codec.Form.from_json(d) for d in json.load(fh)["forms"]]


def test_cached_forms_equal_json_forms(tmp_path, monkeypatch):
    monkeypatch.setenv("PTX2SASS_CACHE", str(tmp_path))
    first = codec.Table.from_cache("ampere", table_cache.load(JSON, "ampere"))
    assert os.listdir(tmp_path), "the first load writes the cache"
    second = codec.Table.from_cache("ampere", table_cache.load(JSON, "ampere"))
    reference = _from_json()
    assert first.forms == reference
    assert second.forms == reference


def test_lazy_table_decodes_like_the_eager_one(tmp_path, monkeypatch):
    monkeypatch.setenv("PTX2SASS_CACHE", str(tmp_path))
    lazy = codec.Table.from_cache("ampere", table_cache.load(JSON, "ampere"))
    eager = codec.Table("ampere", _from_json(), lazy.primary)
    for form in eager.forms[::7]:
        for arch in ("sm_89", "sm_86"):
            a, b = codec.find_form(lazy, form.base, arch), codec.find_form(eager, form.base, arch)
            assert (a and a.base) == (b and b.base)
            assert [f.base for f in lazy.forms_of(form.opcode, arch)] == \
                [f.base for f in eager.forms_of(form.opcode, arch)]
    # only the opcodes met so far were unpacked from the cache
    assert len(lazy._blobs) > 0


def test_corrupt_cache_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("PTX2SASS_CACHE", str(tmp_path))
    path = table_cache.cache_path(JSON, "ampere")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(b"not marshal data")
    content = table_cache.load(JSON, "ampere")
    assert codec.Table.from_cache("ampere", content).forms == _from_json()
    with open(path, "rb") as fh:
        assert fh.read(4) != b"not "


def test_shipped_derived_table_is_used_and_checked(tmp_path, monkeypatch):
    """A wheel carries `tables/<family>.marshal` beside the JSON (setup.py): read without
    touching the cache; one whose JSON size differs is ignored."""
    import shutil
    monkeypatch.setenv("PTX2SASS_CACHE", str(tmp_path / "cache"))
    json_copy = str(tmp_path / "ampere.json")
    shutil.copy(JSON, json_copy)
    table_cache.generate(json_copy)
    content = table_cache.load(json_copy, "ampere")
    assert not (tmp_path / "cache").exists()
    assert codec.Table.from_cache("ampere", content).forms == _from_json()
    with open(json_copy, "a") as fh:
        fh.write(" ")                         # an edited JSON: the shipped file is stale
    assert table_cache.load(json_copy, "ampere")["json_size"] == os.stat(json_copy).st_size
    assert (tmp_path / "cache").exists()


def test_unwritable_cache_dir_falls_back(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv("PTX2SASS_CACHE", str(blocker / "sub"))
    content = table_cache.load(JSON, "ampere")
    assert codec.Table.from_cache("ampere", content).forms == _from_json()


def test_json_crc_read_once_while_the_file_stays(tmp_path, monkeypatch):
    """The cache's name carries the JSON's CRC; summing the 5 MB table in every process cost
    ~8 ms of its start (issue 21, speed29). It is kept by path, size and mtime: read again
    only when the file changes, and then the name follows the new bytes."""
    monkeypatch.setenv("PTX2SASS_CACHE", str(tmp_path / "cache"))
    table = tmp_path / "t.json"
    table.write_bytes(b'{"forms": []}')
    summed = []            # the JSON's reads (table_cache's own `open`: the cache's files are cache.py's)
    monkeypatch.setattr(table_cache, "open", lambda *a, **k: summed.append(a[0]) or open(*a, **k),
                        raising=False)
    real = table_cache.zlib.crc32
    first = table_cache.cache_path(str(table), "x")
    assert table_cache.cache_path(str(table), "x") == first
    assert len(summed) == 1
    table.write_bytes(b'{"forms": [1]}')             # new bytes, size and mtime
    second = table_cache.cache_path(str(table), "x")
    assert second != first and len(summed) == 2
    assert second.endswith(f"-{real(table.read_bytes()):08x}-v{table_cache.FORMAT}.marshal")
    st = os.stat(table)
    table.write_bytes(b'{"forms": [2]}')             # same size: the mtime tells
    os.utime(table, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
    third = table_cache.cache_path(str(table), "x")
    assert third.endswith(f"-{real(table.read_bytes()):08x}-v{table_cache.FORMAT}.marshal")
    assert len(summed) == 3
