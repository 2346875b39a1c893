"""Campaign ids: readable, sorting by start time, and a new folder for every campaign (never one reused)."""

from __future__ import annotations

import calendar
import json
import os
import re
import threading
import time

import pytest
from click.testing import CliRunner

from isrlab import campaign, report
from isrlab.campaign import CampaignSpec, new_campaign_folder, run_shard
from isrlab.cli import main

pytestmark = pytest.mark.unit

ID = re.compile(r"^(?P<day>\d{8})-(?P<time>\d{6})-seed(?P<seed>-?\d+)-(?P<digest>[0-9a-f]{6})(?:-(?P<n>\d+))?$")
#: 2026-11-29 07:15:00 UTC
NOV29 = calendar.timegm((2026, 11, 29, 7, 15, 0))


def _spec(**kw) -> CampaignSpec:
    return CampaignSpec(**dict(dict(presets=("kafka-2.4",), engine="walk", shards=1, runs=2, max_steps=20), **kw))


def test_id_reads_the_utc_start_the_seed_and_a_digest_of_the_spec():
    spec = _spec(seed=7)
    cid = spec.campaign_id(NOV29)
    m = ID.match(cid)
    assert m and cid.startswith("20261129-071500-seed7-") and m["n"] is None, cid
    assert spec.campaign_id(NOV29) == cid
    assert _spec(seed=7).campaign_id(NOV29) == cid                      # the digest is the spec's, not the object's
    assert _spec(seed=7, runs=3).campaign_id(NOV29) != cid              # another spec: another digest
    assert ID.match(_spec(seed=-3).campaign_id(NOV29))["seed"] == "-3"


def test_ids_sort_by_start_time_across_days_and_seeds():
    starts = [calendar.timegm(t) for t in ((2026, 11, 29, 23, 59, 59), (2026, 11, 30, 0, 0, 0),
                                           (2026, 12, 1, 9, 0, 0), (2027, 1, 1, 0, 0, 0))]
    ids = [_spec(seed=s).campaign_id(t) for s, t in zip((9, 0, 123, 1), starts)]
    assert sorted(ids) == ids and len(set(ids)) == 4


def test_two_campaigns_with_the_same_seed_made_at_different_times_get_different_ids(monkeypatch):
    monkeypatch.setattr(campaign.time, "time", lambda: NOV29)
    first = _spec()
    monkeypatch.setattr(campaign.time, "time", lambda: NOV29 + 1)
    second = _spec()
    assert first == second and first.to_json() == second.to_json()      # the same campaign...
    assert first.campaign_id() != second.campaign_id()                  # ...under two ids
    assert first.campaign_id() == first.campaign_id() == first.campaign_id(NOV29)  # one spec answers one id


def test_the_default_start_is_when_the_spec_was_made():
    before = int(time.time())
    spec = _spec()
    after = int(time.time())
    when = calendar.timegm(time.strptime(spec.campaign_id()[:15], "%Y%m%d-%H%M%S"))
    assert before <= when <= after


def test_no_run_depends_on_the_id(monkeypatch):
    monkeypatch.setattr(campaign.time, "time", lambda: NOV29)
    a = _spec(seed=5)
    monkeypatch.setattr(campaign.time, "time", lambda: NOV29 + 86_400)
    b = _spec(seed=5)
    monkeypatch.undo()
    assert a.campaign_id() != b.campaign_id() and a.tasks() == b.tasks()
    assert "_made_unix" not in json.dumps(a.to_json())
    assert run_shard(a.tasks()[0])["runs"] == run_shard(b.tasks()[0])["runs"]


def test_new_folder_is_never_one_that_exists(tmp_path):
    out = tmp_path / "campaigns"
    spec = _spec()
    cid, path = new_campaign_folder(str(out), spec, NOV29)             # creates out too
    assert cid == spec.campaign_id(NOV29) and path == str(out / cid) and os.path.isdir(path)
    (out / cid / "summary.json").write_text("{\"runs\": 50}")
    again, path2 = new_campaign_folder(str(out), spec, NOV29)           # same spec, same second
    assert again == f"{cid}-2" and os.listdir(path2) == []
    assert (out / cid / "summary.json").read_text() == "{\"runs\": 50}"  # the first is untouched
    (out / f"{cid}-3").write_text("a file, not a folder")               # any entry of the name is taken
    assert new_campaign_folder(str(out), spec, NOV29)[0] == f"{cid}-4"
    assert sorted(os.listdir(out)) == [cid, f"{cid}-2", f"{cid}-3", f"{cid}-4"]


def test_campaigns_started_together_get_one_folder_each(tmp_path):
    spec, got, start = _spec(), [], threading.Barrier(8)

    def make():
        start.wait()
        got.append(new_campaign_folder(str(tmp_path), spec, NOV29)[0])

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    base = spec.campaign_id(NOV29)
    assert sorted(got) == sorted([base] + [f"{base}-{n}" for n in range(2, 9)])


def test_an_id_reads_back_in_campaigns_and_report(tmp_path):
    ids = []
    for seed, mtime in ((0, 1_000_000), (0, 2_000_000)):   # the same seed twice, the second one the newer
        cid, folder = new_campaign_folder(str(tmp_path), _spec(seed=seed), NOV29)
        with open(os.path.join(folder, "summary.json"), "w") as fh:
            json.dump({"campaign": cid, "spec": _spec().to_json(), "presets": [], "runs": 2, "as_expected": True}, fh)
        os.utime(os.path.join(folder, "summary.json"), (mtime, mtime))
        ids.append(cid)
    r = CliRunner().invoke(main, ["campaigns", "--out", str(tmp_path), "--json"])
    assert r.exit_code == 0, r.output
    assert [row["id"] for row in json.loads(r.stdout)["campaigns"]] == ids[::-1]
    assert report.resolve(ids[1], str(tmp_path)) == os.path.join(str(tmp_path), ids[1])
    assert ids[1] in CliRunner().invoke(main, ["campaigns", "--out", str(tmp_path)]).output
