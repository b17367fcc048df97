"""redis-py against redbloom, with protocol=2 and protocol=3: the bf() and cf() commands
give the values redis-py documents (add -> True under RESP3, usable BFInfo/CFInfo objects).
Run by tests/it/clients.rs with the server's port in REDBLOOM_PORT; exits non-zero on the first
failed assertion."""

import os
import sys

import redis

PORT = int(os.environ["REDBLOOM_PORT"])


def check(got, want, what):
    if got != want or type(got) is not type(want):
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def bloom(r, protocol, prefix):
    yes, no = (True, False) if protocol == 3 else (1, 0)
    key = f"{prefix}:bf"
    check(r.bf().create(key, 0.01, 100), True, "bf().create")
    check(r.bf().add(key, "x"), yes, "bf().add new")
    check(r.bf().add(key, "x"), no, "bf().add again")
    check(r.bf().madd(key, "x", "y"), [no, yes], "bf().madd")
    check(r.bf().insert(key, ["y", "z"]), [no, yes], "bf().insert")
    check(r.bf().exists(key, "x"), yes, "bf().exists")
    check(r.bf().exists(key, "nothing"), no, "bf().exists absent")
    check(r.bf().mexists(key, "x", "nothing"), [yes, no], "bf().mexists")
    check(r.bf().card(key), 3, "bf().card")
    info = r.bf().info(key)
    if protocol == 3:
        # redis-py passes RESP3 maps through as dicts.
        want = {
            b"Capacity": 100,
            b"Size": 240,
            b"Number of filters": 1,
            b"Number of items inserted": 3,
            b"Expansion rate": 2,
        }
        check(info, want, "bf().info")
    else:
        check(
            (info.capacity, info.size, info.filterNum, info.insertedNum, info.expansionRate),
            (100, 240, 1, 3, 2),
            "bf().info",
        )
    if protocol == 3:
        # (Under RESP2 redis-py feeds every BF.INFO reply to BFInfo, which needs all fields.)
        raw = r.execute_command("BF.INFO", key, "CAPACITY")
        check(raw, {b"Capacity": 100}, "BF.INFO key CAPACITY")

    full = f"{prefix}:bf-full"
    replies = r.bf().insert(full, ["a", "b"], capacity=1, noScale=True)
    check(replies[0], yes, "bf().insert into a full filter, first item")
    if not isinstance(replies[1], redis.ResponseError):
        raise AssertionError(f"full filter: {replies!r}")
    full_info = r.bf().info(full)
    expansion = full_info[b"Expansion rate"] if protocol == 3 else full_info.expansionRate
    check(expansion, None, "non-scaling expansion")

    copy = f"{prefix}:bf-copy"
    iterator = 0
    while True:
        iterator, data = r.bf().scandump(key, iterator)
        if iterator == 0:
            break
        check(r.bf().loadchunk(copy, iterator, data), b"OK", "loadchunk")
    check(r.bf().mexists(copy, "x", "y", "z", "nothing"), [yes, yes, yes, no], "restored")


def cuckoo(r, protocol, prefix):
    yes, no = (True, False) if protocol == 3 else (1, 0)
    key = f"{prefix}:cf"
    check(r.cf().create(key, 1000), True, "cf().create")
    check(r.cf().add(key, "x"), yes, "cf().add")
    check(r.cf().addnx(key, "x"), no, "cf().addnx present")
    check(r.cf().addnx(key, "y"), yes, "cf().addnx")
    check(r.cf().insert(key, ["x", "z"]), [yes, yes], "cf().insert")
    check(r.cf().insertnx(key, ["x", "w"]), [0, 1], "cf().insertnx")
    check(r.cf().exists(key, "x"), yes, "cf().exists")
    check(r.cf().mexists(key, "x", "nothing"), [yes, no], "cf().mexists")
    check(r.cf().count(key, "x"), 2, "cf().count")
    check(r.cf().delete(key, "x"), yes, "cf().delete")
    check(r.cf().delete(key, "nothing"), no, "cf().delete absent")
    info = r.cf().info(key)
    want = (1080, 512, 1, 4, 1, 2, 1, 20)
    if protocol == 3:
        labels = (
            b"Size",
            b"Number of buckets",
            b"Number of filters",
            b"Number of items inserted",
            b"Number of items deleted",
            b"Bucket size",
            b"Expansion rate",
            b"Max iterations",
        )
        check(info, dict(zip(labels, want)), "cf().info")
    else:
        fields = (
            info.size,
            info.bucketNum,
            info.filterNum,
            info.insertedNum,
            info.deletedNum,
            info.bucketSize,
            info.expansionRate,
            info.maxIteration,
        )
        check(fields, want, "cf().info")

    full = f"{prefix}:cf-full"
    r.cf().create(full, 2, bucket_size=1, expansion=0)
    added = r.cf().insert(full, [f"item{i}" for i in range(12)])
    want_failure = False if protocol == 3 else -1
    if yes not in added or want_failure not in added:
        raise AssertionError(f"full cuckoo filter: {added!r}")
    check(r.cf().insertnx(full, ["item0", "another"]), [0, -1], "cf().insertnx, full")


def main():
    for protocol in (3, 2):
        r = redis.Redis(host="127.0.0.1", port=PORT, protocol=protocol)
        hello = r.execute_command("HELLO")
        proto = hello.get("proto", hello.get(b"proto")) if isinstance(hello, dict) else None
        if proto is None:
            proto = hello[hello.index(b"proto") + 1]
        check(proto, protocol, "the protocol redis-py speaks")
        prefix = f"py{protocol}"
        bloom(r, protocol, prefix)
        cuckoo(r, protocol, prefix)
        r.close()
        print(f"redis-py {redis.__version__} protocol={protocol}: ok")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - any failure fails the run, with its message
        print(f"FAILED: {e!r}", file=sys.stderr)
        raise
