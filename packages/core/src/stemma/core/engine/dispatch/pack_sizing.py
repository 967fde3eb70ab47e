"""How many units go in each worker pack when the operation leaves it to stemma.

Every pack costs about the same whatever it holds: a task sent to a worker, a staged bundle (a
handful of fsynced files), a bundle claimed and read by the step's commit. For units of seconds
that is noise; for units of a millisecond it is most of the step (a commit of 1,000 one-unit
bundles ran at a fifth of the speed of the same rows in 100 bundles). So, with
``units_per_worker`` left unset, packs are sized as they go, as joblib's ``batch_size="auto"``
does:

- the first packs hold one unit each, so a step of slow units runs exactly as it always did;
  a step of an operation that ran a sized step earlier in the same run starts at the size
  that step ended with instead (``RunContext.pack_sizes``): its pace is known, and climbing
  from one unit again cost a short step a round trip per doubling (a 1,000-unit step, 1 → 8 →
  64 → 512: three rounds of a worker's fixed cost);
- after each pack comes back, the next holds ``TARGET_PACK_SECONDS`` of work at the speed seen
  so far (the pack's wall time from submission, so its own cost counts): at most ``GROWTH``
  times the last size and at most ``MAX_PACK_UNITS``; slower units shrink it at once;
- a pack never takes more than its share of what is waiting (waiting ÷ workers), so the last
  units of a window still spread over every worker, nor, for that, less than an eighth of the
  size (about 60 ms of work): the window's last packs do not dwindle to one unit each;
- a pack of several units whose worker died is sent again one unit per pack
  (:meth:`PackQueue.send_alone`), so only the unit that kills its worker fails, as if every
  unit had its own worker (nothing of the dead pack was staged; the others run once more).

A backend that queues whole waves (SLURM job arrays) has every pack submitted before any comes
back, so there is nothing to learn from as it goes: its size is set per wave from history
(``wave_sizing``), and a pack of it whose element died is sent again in packs an eighth of the
size (:meth:`PackQueue.send_again`), not one job per unit.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

_T = TypeVar("_T")

TARGET_PACK_SECONDS = 0.5
"""Work per pack that sized packs aim at: the per-pack cost (tens of milliseconds) is then a few
percent, and a graceful cancel or a progress update still comes within about that long."""
GROWTH = 8
"""A pack holds at most this many times the units of the last size: one quick pack (a unit
that failed at once) does not make the next pack huge."""
TAIL_DIVISOR = 8
"""A window's last packs keep at least the size divided by this (:meth:`PackSizer.next_size`)."""
MAX_PACK_UNITS = 512
"""The most units a sized pack holds: a worker that dies takes at most this many units' work
with it (they run again), and a pack's bundle stays small."""


@dataclass(kw_only=True)
class PackSizer:
    """The pack size for a step's next pack: fixed by the operation, or learned as packs return."""

    fixed: int | None
    """The operation's ``units_per_worker``; None to size packs from their speed."""
    workers: int
    """How many packs run at once (a pack never takes more than its share of what waits)."""
    size: int = 1
    """The size the next sized pack aims at."""
    whole_waves: bool = False
    """The backend takes a step's packs all at once (SLURM): every pack is ``size`` (the share
    of what waits, which spreads a window's tail over free workers, would only cut the wave's
    last elements small)."""

    @property
    def sized(self) -> bool:
        """Whether packs are sized from their speed (``units_per_worker`` left unset)."""
        return self.fixed is None

    @property
    def per_pack(self) -> int:
        """The units of a full pack now: fixed, or the size learned so far."""
        return self.fixed if self.fixed is not None else self.size

    def next_size(self, waiting: int) -> int:
        """How many of ``waiting`` units the next pack takes (at least one)."""
        if self.fixed is not None:
            return self.fixed
        if self.whole_waves:
            return max(1, self.size)
        share = -(-waiting // max(1, self.workers))
        # (never below an eighth of the size: halving down to one unit would end every window
        # with a string of tiny packs, each paying the whole per-pack cost)
        return max(1, min(self.size, max(share, self.size // TAIL_DIVISOR)))

    def observe(self, units: int, seconds: float) -> None:
        """A pack of ``units`` units came back ``seconds`` after it was sent."""
        if self.fixed is not None or self.whole_waves or units < 1:
            return  # (a whole wave's size is set per wave, from the units' own seconds)
        ideal = int(TARGET_PACK_SECONDS * units / max(seconds, 1e-6))
        if ideal > self.size:
            self.size = min(ideal, self.size * GROWTH, MAX_PACK_UNITS)
        else:
            self.size = max(1, ideal)

    def overdue(self, units: int, seconds: float) -> None:
        """A pack of ``units`` units sent ``seconds`` ago has not come back: shrink, never grow.

        Its units are slower than the size assumed; the packs sent meanwhile should not be
        as large (the late pack itself runs on).
        """
        if self.fixed is None and not self.whole_waves and units > 0:
            self.size = max(1, min(self.size, int(TARGET_PACK_SECONDS * units / seconds)))

    def died(self, units: int) -> None:
        """A pack of ``units`` units lost its worker: the next packs are much smaller.

        (A pack's records and artifacts are held until it is staged, so a pack too large for
        the worker's memory would otherwise be tried again and again at the same size.)
        """
        if self.fixed is None:
            self.size = max(1, min(self.size, units // GROWTH))


class PackQueue(Generic[_T]):
    """The units of a window waiting to be sent, cut into packs as workers free up."""

    def __init__(self, units: Iterable[_T], sizer: PackSizer) -> None:
        self._units: deque[_T] = deque(units)
        self._alone: deque[_T] = deque()
        self._again = 0
        """How many of the first ``_units`` were sent before (:meth:`send_again`)."""
        self._sizer = sizer
        self.taken_again = 0
        """How many units of the last :meth:`take` were sent before (their pack's worker died)."""

    def __bool__(self) -> bool:
        return bool(self._units or self._alone)

    def take(self, packs: int | None = None) -> list[list[_T]]:
        """Up to ``packs`` packs (None: every unit waiting), units sent alone first."""
        taken: list[list[_T]] = []
        self.taken_again = 0
        while self and (packs is None or len(taken) < packs):
            if self._alone:
                taken.append([self._alone.popleft()])
                self.taken_again += 1
                continue
            size = min(self._sizer.next_size(len(self._units)), len(self._units))
            taken.append([self._units.popleft() for _ in range(size)])
            again = min(size, self._again)
            self._again -= again
            self.taken_again += again
        return taken

    def send_alone(self, units: Iterable[_T]) -> None:
        """Send these units again, each in a pack of its own, before any other."""
        self._alone.extend(units)

    def send_again(self, units: Iterable[_T]) -> None:
        """Send these units again first, in packs of the sizer's (shrunk) size.

        For a scheduler's element of thousands of units that died: one job per unit would be
        the flood sized elements avoid; packs an eighth of the size each time narrow it down.
        """
        again = list(units)
        self._units.extendleft(reversed(again))
        self._again += len(again)

    def clear(self) -> int:
        """Drop every waiting unit (a stop); return how many of them had been sent before."""
        again = len(self._alone) + self._again
        self._units.clear()
        self._alone.clear()
        self._again = 0
        return again
