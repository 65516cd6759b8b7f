"""An exact set of 64-bit row digests that stays small when a transcript is long.

An adapter that drops re-appended rows has to remember every row it has seen,
and a long transcript has millions. As a Python ``set`` of ints each digest
costs about 84 bytes (the int object and its share of the hash table): 59 MB
for the 700,000 rows of a 1 GB Claude Code transcript, most of that command's
memory. Here the first :data:`SPILL` digests live in a plain set, the cheapest
structure while it is small; past it, each digest is kept as its last seven
bytes in one of 16,384 byte strings picked by its first fourteen bits, some
8 bytes a row in all (6 MB for those 700,000 rows, 55 MB for 7 million). A
lookup scans one such string with ``bytearray.find``: C code over some 300
bytes at 1 GB. It costs more than a set's lookup (a 1 GB ``stats`` takes about
5 % longer, measured), which is why small transcripts never leave the set.

Digests are the eight bytes a hash gives; the set answers exactly for them
(no false positives), so two rows are only taken for one when their digests
are equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final

__all__ = ("SPILL", "RowDigests")

#: How many digests the plain set holds (about 2.5 MB) before they move to
#: the byte strings (about 1.3 MB for as many).
SPILL = 1 << 15

_DIGEST_SIZE: Final = 8
_BUCKET_BITS: Final = 14
_SHIFT: Final = 16 - _BUCKET_BITS
# The bucket's index takes the first byte and six bits of the second; an entry
# keeps the second byte whole, so it and the index together are the digest.
_TAIL: Final = _DIGEST_SIZE - 1


class RowDigests:
    """The 8-byte digests of the rows seen so far, with an add that says whether one is new."""

    __slots__ = ("_buckets", "_count", "_small")

    def __init__(self, digests: Iterable[bytes] = ()) -> None:
        self._small: set[bytes] | None = set()
        self._buckets: list[bytearray] | None = None
        self._count = 0
        for digest in digests:
            self.add(digest)

    def add(self, digest: bytes) -> bool:
        """Remember *digest*; return whether it was new (``False``: seen before).

        Raises:
            ValueError: *digest* is not eight bytes long.
        """
        if len(digest) != _DIGEST_SIZE:
            raise ValueError(f"a row digest is {_DIGEST_SIZE} bytes, not {len(digest)}")
        buckets = self._buckets
        if buckets is None:
            small = self._small
            assert small is not None
            if digest in small:
                return False
            small.add(digest)
            self._count += 1
            if self._count > SPILL:
                self._spill(small)
            return True
        bucket = buckets[(digest[0] << 8 | digest[1]) >> _SHIFT]
        tail = digest[1:]
        if _holds(bucket, tail):
            return False
        bucket += tail
        self._count += 1
        return True

    def __contains__(self, digest: object) -> bool:
        if not isinstance(digest, bytes) or len(digest) != _DIGEST_SIZE:
            return False
        if self._buckets is None:
            assert self._small is not None
            return digest in self._small
        return _holds(self._buckets[(digest[0] << 8 | digest[1]) >> _SHIFT], digest[1:])

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[bytes]:
        if self._buckets is None:
            assert self._small is not None
            yield from self._small
            return
        for index, bucket in enumerate(self._buckets):
            first = bytes((index >> (8 - _SHIFT),))
            for at in range(0, len(bucket), _TAIL):
                yield first + bucket[at : at + _TAIL]

    def _spill(self, small: set[bytes]) -> None:
        buckets = [bytearray() for _ in range(1 << _BUCKET_BITS)]
        for digest in small:
            buckets[(digest[0] << 8 | digest[1]) >> _SHIFT] += digest[1:]
        self._buckets = buckets
        self._small = None

    # Pickled as its parts (a follower saves an adapter's state and another
    # process restores it); slots have no __dict__ for pickle's default.
    def __getstate__(self) -> tuple[set[bytes] | None, list[bytearray] | None, int]:
        return self._small, self._buckets, self._count

    def __setstate__(self, state: tuple[set[bytes] | None, list[bytearray] | None, int]) -> None:
        self._small, self._buckets, self._count = state


def _holds(bucket: bytearray, tail: bytes) -> bool:
    """Whether *tail* is one of *bucket*'s entries."""
    at = bucket.find(tail)
    while at >= 0:
        # A match that straddles two entries is not one: entries start at
        # multiples of seven.
        if at % _TAIL == 0:
            return True
        at = bucket.find(tail, at + 1)
    return False
