"""AttemptRecord's Filter map: made from the recorded passes when it is read."""

from __future__ import annotations

from kubesched.runtime._status import Code, Status
from kubesched.scheduler._results import FILTER_RESULT, AttemptRecord


def test_the_filter_map_holds_every_pass_a_later_verdict_replacing_an_earlier_one() -> None:
    """Each node's {plugin: verdict} JSON, in the order the nodes were first seen; a node that a
    later pass (the nominated node's, then the rest) judges again takes that pass's verdict."""
    rec = AttemptRecord()
    assert rec.filter == {}
    rec.filtered(["A", "B"], ["n1", "n2"], ["n3"], [Status(Code.UNSCHEDULABLE, "no room", plugin="B")])
    no_room = '{"A":"passed","B":"no room"}'
    passed_ab = '{"A":"passed","B":"passed"}'
    assert rec.filter == {"n1": passed_ab, "n2": passed_ab, "n3": no_room}
    taint = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "tainted", plugin="A")
    rec.filtered(["A"], ["n3", "n4"], ["n1", "n5"], [taint, taint])
    assert list(rec.filter.items()) == [
        ("n1", '{"A":"tainted"}'),
        ("n2", passed_ab),
        ("n3", '{"A":"passed"}'),
        ("n4", '{"A":"passed"}'),
        ("n5", '{"A":"tainted"}'),
    ]
    assert rec.annotations()[FILTER_RESULT] == (
        '{"n1":{"A":"tainted"},"n2":{"A":"passed","B":"passed"},"n3":{"A":"passed"},'
        '"n4":{"A":"passed"},"n5":{"A":"tainted"}}'
    )
