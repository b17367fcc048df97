"""LocalCopy never gives a false negative: items added on the server after the pull are
answered present, from the copy once it is current, from the server before."""

import pytest

import redbloom

ITEMS = ["c%d" % i for i in range(2000)]


RESERVE_ARGS = {"bf": [0.01, 1000], "cf": [1000], "cbf": [0.01, 1000], "xf": [0.01, "CAPACITY", 1000]}


@pytest.mark.parametrize("family", ["bf", "cf", "cbf", "xf"])
def test_adds_after_the_pull_are_never_absent(client, name, family):
    key = "{%s}%s" % (name, family)
    client.execute_command(family.upper() + ".RESERVE", key, *RESERVE_ARGS[family])
    client.execute_command(family.upper() + ".ADD", key, "first")
    copy = redbloom.LocalCopy(client, key, min_pull_interval=0)
    assert "first" in copy and copy.stats["checks"] == 0  # present: the copy alone
    for at in range(0, 600, 50):
        batch = ITEMS[at:at + 50]
        for item in batch:
            client.execute_command(family.upper() + ".ADD", key, item)
        # Each item added since the pull, asked one by one and in batches: present.
        assert all(item in copy for item in batch[:5])
        assert copy.contains_many(ITEMS[:at + 50]) == [True] * (at + 50)
    assert copy.stats["server"] > 0  # the stale copy asked the server
    if family not in ("cbf", "xf"):
        assert copy.stats["pulls"] > 1
        # Current again: absent answers come from the copy after one header check.
        before = dict(copy.stats)
        assert copy.contains_many(["never-%d" % i for i in range(100)]).count(True) <= 5
        assert copy.stats["server"] - before["server"] <= 5
        assert copy.stats["checks"] == before["checks"] + 1


def test_deletes_then_adds_on_cuckoo(client, name):
    client.execute_command("CF.RESERVE", name, 1000)
    client.execute_command("CF.ADD", name, "a")
    copy = redbloom.LocalCopy(client, name)
    client.execute_command("CF.DEL", name, "a")
    client.execute_command("CF.ADD", name, "b")  # items back to 1: the deletes count moved
    assert "b" in copy


def test_deletes_then_adds_on_xf(client, name):
    client.execute_command("XF.ADD", name, "a")
    copy = redbloom.LocalCopy(client, name)
    client.execute_command("XF.DEL", name, "a")
    client.execute_command("XF.ADD", name, "b")  # items back to 1
    assert "b" in copy and copy.stats["server"] == 1 and copy.stats["checks"] == 0


def test_static_copy_answers_for_ever(client, name):
    client.execute_command("SF.BUILD", name, 0.01, "ITEMS", *ITEMS)
    copy = redbloom.LocalCopy(client, name)
    answers = copy.contains_many(ITEMS + ["zz%d" % i for i in range(1000)])
    assert answers[:2000] == [True] * 2000
    assert copy.stats == {"local": 3000, "server": 0, "pulls": 1, "checks": 0}
