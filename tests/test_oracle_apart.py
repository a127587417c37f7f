"""The oracle is beyond the backends' reach: the judge imports the reference backend from its own
package, never through the entry-point registry that backends under test use, so a package that
registers the name `reference` changes no expected value."""

from __future__ import annotations

from importlib.metadata import EntryPoint


from conformance import backends as backends_module
from conformance.judge.ambiguities import reference
from conformance.judge.lock import Lock, lock_path
from conformance.judge.oracle import derive
from tests.support.bundled import bundled_items


def test_a_backend_registered_as_reference_changes_no_expected_value(monkeypatch):
    impostor = EntryPoint("reference", "tests.meta.support.faulty_backends:WrongAtVersion12", "conformance.backends")
    real = backends_module.entry_points
    monkeypatch.setattr(backends_module, "entry_points",
                        lambda group=None: [impostor, *real(group=group)] if group else real())
    assert backends_module.load_backend("reference").name == "faulty"  # the registry is fooled...
    reference.cache_clear()
    try:
        lock = Lock(lock_path())
        items = [i for i in bundled_items() if i.version == 12 and i.expectation == "derived"][:30]
        assert items
        for item in items:  # ...the judge is not: each derived value is still the locked one
            expected, _ = derive(item, item.make_inputs(0))
            lock.verify(item, expected)
    finally:
        reference.cache_clear()


def test_the_oracle_is_the_reference_backend_s_own_class():
    from reference_backend import ReferenceBackend

    assert reference().backend is ReferenceBackend
