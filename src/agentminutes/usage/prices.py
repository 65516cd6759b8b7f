"""Prices for token usage, offline: the genai-prices catalog and the user's own price file.

Every figure names where its price came from (``genai-prices 0.2.3``, or the
price file by name and digest). A model no source prices is *unpriced*: its
tokens are counted and reported apart, its cost is ``None``, never 0.

* **genai-prices** (the ``cost`` extra, imported only when a cost is asked
  for) looks the model up (``LookupError`` when it does not know it), picks the
  price in force on the request's date and applies long-context tiers the way
  the provider bills them: a request whose input crosses a tier's threshold
  pays that tier's rate for all its tokens. Requests are priced in groups of
  one model, one UTC day and one tier, each group as its count times the
  price of its mean request (exact: within a tier the price is linear, and the
  mean of requests in a tier lies in it), so a home of many thousands of
  requests is priced in a few hundred catalog calls.
* **A memo** (:class:`PriceMemo`, a file beside the summary cache) keeps what
  the catalog answered: whether it knows a model, and each UTC day's group of
  a model's requests priced, by a digest of the requests. A report over
  unchanged transcripts is priced from it without importing the catalog; a
  memo made with another catalog (installed anew: another path, size or
  mtime of its data) is not used.
* **A price file** (``--prices FILE``, TOML or JSON) adds models or overrides
  the catalog: ``[models."<model or glob>"]`` with ``input_mtok``,
  ``output_mtok``, ``cache_read_mtok``, ``cache_write_mtok`` and optionally
  ``cache_write_1h_mtok`` (USD per million tokens). Input is priced on fresh
  input (the normalized ``input_tokens`` less the cache parts).
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final, NamedTuple

import msgspec

from agentminutes.errors import UsageError

try:  # CPython's own BLAKE2 module: hashlib would load OpenSSL at start-up for it
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter without it
    from hashlib import blake2b

__all__ = (
    "CATALOG",
    "PriceFile",
    "PriceMemo",
    "PricedCost",
    "Pricer",
    "Tokens",
    "catalog_available",
)

#: The catalog's distribution name.
CATALOG: Final = "genai-prices"

#: genai-prices' provider ids where they differ from OpenTelemetry's provider names.
_CATALOG_PROVIDERS: Final = {"gcp.gemini": "google"}

_MTOK: Final = Decimal(1_000_000)


def _provider_hint(harness: str) -> str | None:
    """The provider genai-prices should look *harness*'s models up with first (its description's)."""
    from agentminutes.harness.registry import described

    found = described(harness)
    provider = found.provider if found is not None else ""
    return _CATALOG_PROVIDERS.get(provider, provider) or None


class Tokens(NamedTuple):
    """One request's normalized counts, as pricing needs them (``input`` includes the cache parts)."""

    ns: int
    input: int
    output: int
    cache_read: int
    cache_write: int
    cache_write_1h: int | None


@dataclass
class PricedCost:
    """The cost of a set of requests of one model: ``None`` when no source prices the model."""

    cost: Decimal | None
    #: The price sources used, e.g. ``genai-prices 0.2.3`` (empty when unpriced).
    sources: list[str] = field(default_factory=list)
    #: Why the model is unpriced, when it is.
    reason: str = ""


#: Why a model is unpriced on a base install (the reason starts so).
NO_CATALOG: Final = "no price catalog"


def catalog_available() -> bool:
    """Whether the genai-prices catalog is installed (the ``cost`` extra)."""
    from importlib.util import find_spec

    return find_spec("genai_prices") is not None


@dataclass
class _FilePrice:
    input: Decimal
    output: Decimal
    cache_read: Decimal
    cache_write: Decimal
    cache_write_1h: Decimal | None


class PriceFile:
    """User prices read from a TOML or JSON file; keys are model ids or globs (case-insensitive)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise UsageError(f"--prices {self.path}: {exc.strerror or exc}") from None
        import hashlib
        import tomllib

        digest = hashlib.sha256(data).hexdigest()[:12]
        self.label = f"{os.path.basename(self.path)} sha256:{digest}"
        try:
            if self.path.endswith(".json"):
                doc = json.loads(data)
            else:
                doc = tomllib.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise UsageError(f"--prices {self.path}: not valid TOML or JSON: {exc}") from None
        models = doc.get("models") if isinstance(doc, dict) else None
        if not isinstance(models, dict) or not models:
            raise UsageError(f'--prices {self.path}: no "models" table')
        self._exact: dict[str, _FilePrice] = {}
        self._globs: list[tuple[str, _FilePrice]] = []
        for name, entry in models.items():
            price = self._entry(str(name), entry)
            key = str(name).lower()
            if any(c in key for c in "*?["):
                self._globs.append((key, price))
            else:
                self._exact[key] = price

    def _entry(self, name: str, entry: Any) -> _FilePrice:
        if not isinstance(entry, dict):
            raise UsageError(f'--prices {self.path}: model "{name}" is not a table')

        def num(key: str, default: Decimal | None) -> Decimal | None:
            value = entry.get(key)
            if value is None:
                return default
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise UsageError(f'--prices {self.path}: model "{name}": {key} is not a number')
            try:
                out = Decimal(str(value))
            except ArithmeticError:
                raise UsageError(
                    f'--prices {self.path}: model "{name}": {key} is not a number'
                ) from None
            if not out.is_finite() or out < 0:
                raise UsageError(f'--prices {self.path}: model "{name}": {key} must be ≥ 0')
            return out

        for required in ("input_mtok", "output_mtok"):
            if required not in entry:
                raise UsageError(f'--prices {self.path}: model "{name}" has no {required}')
        unknown = set(entry) - {
            "input_mtok",
            "output_mtok",
            "cache_read_mtok",
            "cache_write_mtok",
            "cache_write_1h_mtok",
        }
        if unknown:
            listed = ", ".join(sorted(unknown))
            raise UsageError(f'--prices {self.path}: model "{name}": unknown keys {listed}')
        input_price = num("input_mtok", None)
        output_price = num("output_mtok", None)
        assert input_price is not None
        assert output_price is not None
        return _FilePrice(
            input=input_price,
            output=output_price,
            cache_read=num("cache_read_mtok", input_price) or Decimal(0),
            cache_write=num("cache_write_mtok", input_price) or Decimal(0),
            cache_write_1h=num("cache_write_1h_mtok", None),
        )

    def find(self, model: str) -> _FilePrice | None:
        key = model.lower()
        found = self._exact.get(key)
        if found is not None:
            return found
        for pattern, price in self._globs:
            if fnmatch.fnmatchcase(key, pattern):
                return price
        return None

    def cost(self, price: _FilePrice, tokens: Iterable[Tokens]) -> Decimal:
        total = Decimal(0)
        for t in tokens:
            fresh = max(0, t.input - t.cache_read - t.cache_write)
            hour = t.cache_write_1h or 0
            if price.cache_write_1h is None:
                hour = 0
            total += (
                fresh * price.input
                + t.output * price.output
                + t.cache_read * price.cache_read
                + (t.cache_write - hour) * price.cache_write
                + hour * (price.cache_write_1h or Decimal(0))
            )
        return total / _MTOK


def _catalog_identity() -> str:
    """Where the installed catalog's data is, its size and mtime ("" when not installed)."""
    from importlib.util import find_spec

    spec = find_spec("genai_prices")
    if spec is None or not spec.origin:
        return ""
    data = os.path.join(os.path.dirname(spec.origin), "data.py")
    try:
        st = os.stat(data)
    except OSError:
        return ""
    return f"{data} {st.st_size} {st.st_mtime_ns}"


class _MemoFile(msgspec.Struct):
    fingerprint: str
    label: str
    #: (model, harness) → whether the catalog knows the model.
    known: dict[str, bool]
    #: A day's group of requests (its digest) → the costs added for it, in order.
    costs: dict[str, list[str]]


#: The memo's format; bump when what it holds or how a cost is computed changes.
MEMO_FORMAT: Final = 2

_MEMO_FILE: Final = "usage-prices.msgpack"

#: Most groups the memo keeps (those of the last report first; a home has a few thousand).
MEMO_GROUPS: Final = 100_000


class PriceMemo:
    """What the genai-prices catalog answered, kept in *folder* (``None``: in memory only).

    Written whole (a temporary file renamed) by :meth:`save`; one that cannot
    be read is ignored and rebuilt, one that cannot be written is passed over
    (the summary cache's folder says so already).
    """

    def __init__(self, folder: str | None = None) -> None:
        from agentminutes._version import __version__

        self.path = os.path.join(folder, _MEMO_FILE) if folder else ""
        self._identity: str | None = None
        self.version = f"agentminutes {__version__} prices {MEMO_FORMAT}"
        self.label = ""
        self.known: dict[str, bool] = {}
        self.costs: dict[str, list[str]] = {}
        self._used: set[str] = set()
        self._dirty = False
        self._loaded = False

    def _fingerprint(self) -> str:
        if self._identity is None:
            self._identity = _catalog_identity()
        return f"{self.version} {self._identity}"

    def load(self) -> None:
        """Read the memo file once (a memo of another catalog or release is dropped)."""
        if self._loaded:
            return
        self._loaded = True
        if not self.path:
            return
        try:
            with open(self.path, "rb") as f:
                doc = msgspec.msgpack.decode(f.read(), type=_MemoFile)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            return
        if doc.fingerprint != self._fingerprint():
            return
        self.label = doc.label
        self.known = doc.known
        self.costs = doc.costs

    def knows(self, model: str, harness: str) -> bool | None:
        """Whether the catalog knows *model* (of *harness*), ``None`` when not memoized."""
        return self.known.get(f"{model}\x00{harness}")

    def remember(self, model: str, harness: str, known: bool) -> None:
        """Keep whether the catalog knows *model* (of *harness*)."""
        self.known[f"{model}\x00{harness}"] = known
        self._dirty = True

    def get(self, key: str) -> list[str] | None:
        """The costs memoized for the group *key*, or ``None``."""
        found = self.costs.get(key)
        if found is not None:
            self._used.add(key)
        return found

    def put(self, key: str, costs: list[Decimal]) -> None:
        """Keep the costs of the group *key*."""
        self.costs[key] = [str(c) for c in costs]
        self._used.add(key)
        self._dirty = True

    def save(self) -> None:
        """Write the memo if it changed (groups no report used this time dropped first,
        once it holds :data:`MEMO_GROUPS`)."""
        if not self.path or not self._dirty:
            return
        if len(self.costs) > MEMO_GROUPS:
            self.costs = {k: v for k, v in self.costs.items() if k in self._used}
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            data = msgspec.msgpack.encode(
                _MemoFile(self._fingerprint(), self.label, self.known, self.costs)
            )
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return
        self._dirty = False


def _group_key(model: str, harness: str, group: Sequence[Tokens]) -> str:
    """The digest a day's group of a model's requests is memoized by (every count and time)."""
    data = msgspec.msgpack.encode((model, harness, group))
    return blake2b(data, digest_size=16).hexdigest()


class Pricer:
    """Prices the requests of one model: the price file first, then the genai-prices catalog."""

    def __init__(
        self,
        price_file: PriceFile | None = None,
        *,
        catalog: bool = True,
        memo: PriceMemo | None = None,
    ) -> None:
        self.price_file = price_file
        self.catalog = catalog and catalog_available()
        self._catalog_label = ""
        self._lookups: dict[tuple[str, str], Any] = {}
        self.memo = memo if memo is not None else PriceMemo()

    @property
    def catalog_label(self) -> str:
        """``genai-prices <version>`` (from the memo, else imports the catalog)."""
        if not self._catalog_label:
            self.memo.load()
            if self.memo.label:
                self._catalog_label = self.memo.label
            else:
                import genai_prices

                self._catalog_label = f"{CATALOG} {genai_prices.__version__}"
                self.memo.label = self._catalog_label
        return self._catalog_label

    def prepare(self) -> None:
        """Import the catalog and load its data now (what pricing requests not in the memo
        will need): ``usage`` runs it while worker processes read the transcripts."""
        if not self.catalog:
            return
        from genai_prices import data_snapshot

        data_snapshot.get_snapshot()
        _ = self.catalog_label

    def price(self, model: str, harness: str, tokens: Sequence[Tokens]) -> PricedCost:
        """The cost of *tokens* (requests of *model*, recorded by *harness*)."""
        if self.price_file is not None:
            found = self.price_file.find(model)
            if found is not None:
                return PricedCost(self.price_file.cost(found, tokens), [self.price_file.label])
        if not model:
            return PricedCost(None, reason="no model recorded")
        if not self.catalog:
            return PricedCost(None, reason=f"{NO_CATALOG}: pip install 'agentminutes-py[cost]'")
        memo = self.memo
        memo.load()
        known = memo.knows(model, harness)
        if known is None:
            known = self._lookup(model, harness) is not None
            memo.remember(model, harness, known)
        if not known:
            return PricedCost(None, reason=f"{self.catalog_label} does not know the model")
        return PricedCost(self._catalog_cost(model, harness, tokens), [self.catalog_label])

    def _lookup(self, model: str, harness: str) -> Any:
        """The catalog's (provider, model info) for *model* of *harness*, ``None`` if unknown."""
        key = (model, harness)
        if key in self._lookups:
            return self._lookups[key]
        from genai_prices import data_snapshot

        snapshot = data_snapshot.get_snapshot()
        found = None
        hints = [_provider_hint(harness), None]
        for hint in dict.fromkeys(hints):
            try:
                found = snapshot.find_provider_model(model, None, hint, None)
                break
            except LookupError:
                continue
        self._lookups[key] = found
        return found

    def _catalog_cost(self, model: str, harness: str, tokens: Sequence[Tokens]) -> Decimal:
        """Price per UTC day and tier: count × price of the group's mean request.

        Each day's costs come from the memo where it has them (a day of requests with
        no time is priced at today's prices: never memoized), and are added to the
        total in the order they were computed in, so a memoized total is the same.
        """
        by_day: dict[int, list[Tokens]] = {}
        for t in tokens:
            by_day.setdefault(t.ns // 86_400_000_000_000 if t.ns else -1, []).append(t)
        total = Decimal(0)
        memo = self.memo
        for day, group in by_day.items():
            key = _group_key(model, harness, group) if day >= 0 else ""
            found = memo.get(key) if key else None
            if found is not None:
                for text in found:
                    total += Decimal(text)
                continue
            costs = self._day_costs(model, harness, day, group)
            if key:
                memo.put(key, costs)
            for cost in costs:
                total += cost
        return total

    def _day_costs(self, model: str, harness: str, day: int, group: list[Tokens]) -> list[Decimal]:
        """The costs of one UTC day's requests of *model*, as :meth:`_catalog_cost` adds them.

        Requests are grouped by the price in force at their time (one a day, but for a
        time-of-day rate such as an off-peak price) and, within it, by tier; each
        group costs its count times the price of its mean request.
        """
        from genai_prices.types import Usage

        info = self._lookup(model, harness)
        assert info is not None  # the caller asked whether the catalog knows the model
        _, model_info = info
        first = min(t.ns for t in group)
        start_price = model_info.get_prices(_when(first))
        priced: list[tuple[Any, list[Tokens]]] = [(start_price, group)]
        if day >= 0 and not _steady_within_day(model_info):
            # A time-of-day price: each request's price resolved, the requests of one
            # price kept together (the catalog returns the one object of each price).
            by_price: dict[int, tuple[Any, list[Tokens]]] = {}
            for t in group:
                price = model_info.get_prices(_when(t.ns))
                by_price.setdefault(id(price), (price, []))[1].append(t)
            priced = list(by_price.values())
        out: list[Decimal] = []
        for price, members in priced:
            thresholds = _tier_starts(price)
            bands: dict[int, list[Tokens]] = {0: members}
            if thresholds:
                bands = {}
                for t in members:
                    band = sum(1 for start in thresholds if t.input > start)
                    bands.setdefault(band, []).append(t)
            for banded in bands.values():
                mean = _usage(Usage, banded)
                out.append(price.calc_price(mean)["total_price"] * len(banded))
        return out


def _steady_within_day(model_info: Any) -> bool:
    """Whether *model_info*'s price is one all through a UTC day: no condition, or only
    start dates (which the catalog compares as UTC dates). A time-of-day price, or a
    condition of a kind not known here, is not."""
    from genai_prices.types import ModelPrice, StartDateConstraint

    prices = model_info.prices
    if isinstance(prices, ModelPrice):
        return True
    return all(c.constraint is None or type(c.constraint) is StartDateConstraint for c in prices)


def _tier_starts(price: Any) -> list[int]:
    """The input thresholds of *price*'s long-context tiers, ascending."""
    from genai_prices.types import TieredPrices

    return sorted(
        {
            tier.start
            for value in vars(price).values()
            if isinstance(value, TieredPrices)
            for tier in value.tiers
        }
    )


def _when(ns: int) -> datetime:
    if not ns:
        return datetime.now(tz=UTC)
    return datetime.fromtimestamp(ns / 1e9, tz=UTC)


def _usage(usage_type: Any, members: Sequence[Tokens]) -> Any:
    """genai-prices ``Usage`` of the mean of *members* (Decimal counts: exact to 28 digits)."""
    n = Decimal(len(members))
    inputs = sum(t.input for t in members)
    outputs = sum(t.output for t in members)
    reads = sum(t.cache_read for t in members)
    writes = sum(t.cache_write for t in members)
    hours = [t.cache_write_1h for t in members if t.cache_write_1h is not None]
    kwargs: dict[str, Any] = {
        "input_tokens": Decimal(inputs) / n,
        "output_tokens": Decimal(outputs) / n,
        "cache_read_tokens": Decimal(reads) / n,
        "cache_write_tokens": Decimal(writes) / n,
    }
    if hours:
        hour = sum(hours)
        kwargs["cache_write_1h_tokens"] = Decimal(hour) / n
        kwargs["cache_write_5m_tokens"] = Decimal(writes - hour) / n
    return usage_type(**kwargs)
