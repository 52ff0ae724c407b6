"""Resource limits: the one place that says how far hlo-indexing goes on any input.

Every algorithm is bounded by the size of its input text, or by one of these limits;
past a limit the input is refused with its own :class:`~hlo_indexing.errors.LimitExceededError`
subclass (the error's ``limit`` attribute names the constant here). Work that depends
on the magnitude of numbers rather than on the text's length is done in constant time
(e.g. the simplifier's residue classes) or refused.

========================  ==========================  =====================================
limit                     error                       what it bounds
========================  ==========================  =====================================
``MAX_NESTING_DEPTH``     ``NestingTooDeepError``     parentheses in map text; depth of an
                                                      expression (text, attribute, MLIR map)
``INT64_MIN/INT64_MAX``   ``IntegerOverflowError``    every number: constants, bounds,
                                                      shapes, strides, offsets, sizes
``MAX_DIMENSION_INDEX``   ``LimitExceededError``      a dimension number in convolution
                                                      ``dim_numbers`` (checked before MLIR's
                                                      parser, which allocates by its value)
``MAX_RESULT_INDEX``      ``LimitExceededError``      a result number in MLIR text (``%0#N``,
                                                      ``%0:N``), checked before MLIR's parser
``MAX_ATTRIBUTE_ELEMENTS``  ``LimitExceededError``  integers in one 1-d integer ``dense``
                                                      attribute (checked before MLIR's parser,
                                                      whose verifiers walk every element) and
                                                      read from one op attribute
``MAX_ENUMERATION_POINTS``  ``DomainTooLargeError``   points of a domain enumerated by
                                                      ``IndexingMap.enumerate`` (default)
``MAX_VIEWER_CELLS``      ``EnumerationTooLargeError``  cells drawn by ``hlo-indexing-layout``
``MAX_EXACTNESS_POINTS``  (``not computed``, reason)  points (map points, elements of tiles
                                                      and of images) enumerated for the
                                                      exactness of one tiling's operand
``MAX_INDEX_MAP_CASES``   (an unknown, reported)    cases (regions with one affine value)
                                                      of one value of a Pallas index map
``MAX_PALLAS_GRID_POINTS``  (not decided, reported)  grid points a Pallas check enumerates
                                                      when reasoning on the maps does not
                                                      decide it
``MAX_TILING_CANDIDATES``  (capped, reported)         candidate tilings ``rank_tilings``
                                                      considers per fusion (smallest sizes
                                                      dropped first; ``Ranking.capped``)
``MAX_FOOTPRINTS_PER_FUSION``  (capped, reported)     tilings whose footprint is built one
                                                      by one when a fusion's footprints are
                                                      not separable (``Ranking.capped``)
``MAX_PER_TILING_ROWS``  (capped, reported)         programs times runtime values of the
                                                      tilings built one by one, summed
                                                      (``Ranking.capped``)
``MAX_UNION_POINTS``      (tiling by tiling instead)  tile indices counted jointly for an
                                                      operand read through several tiles
``MAX_TILE_INDICES_PER_BATCH``  (none: batches)       tile indices a ranking evaluates at
                                                      once (its memory, whatever the
                                                      program limit ``max-programs``)
``HLO_PARSE_SECONDS``     ``TimeLimitError``          wall-clock time of XLA's HLO parser and
                                                      translator (isolated child process)
``MAX_PROGRAMS``          (skipped, reported)         programs of a tiling ``rank_tilings``
                                                      evaluates (option ``max-programs``)
``MAX_TILED_NODES``       (not tiled, warning)        tiled instructions of one fusion's
                                                      analysis (option ``max-nodes``)
``FUSION_SECONDS``        ``TimeLimitError``          CPU time to tile one computation
                          (not tiled, warning)        in the tiling passes (``fusion-seconds``)
``ISOLATED_MEMORY_BYTES``  ``MemoryLimitError``    memory the isolated HLO parser may
                                                      allocate above its parent (a lower
                                                      ``ulimit -v`` of the user's wins)
``PROOF_SECONDS``         (proof not run, reason)     wall-clock time of one isl proof
                                                      (``maps.exact``, in the isolation server)
``ISL_MAX_OPERATIONS``    (proof not run, reason)     isl's own count of elementary steps in
                                                      one proof (gives up sooner than the time)
``ISL_MAX_CASES``         (proof not run, reason)     pieces a semi-affine map is split into
                                                      (one per value of its products' factors)
========================  ==========================  =====================================

Expressions built by composition may nest deeper than any text we parse: the expression
walks handle any depth (:mod:`hlo_indexing.maps.affine_expr`), and the recursive
simplifier leaves a map too deep for Python's recursion limit as it is (exact, not
simplified; :mod:`hlo_indexing.maps.simplifier`).
"""

from __future__ import annotations

from hlo_indexing.errors import IntegerOverflowError, NestingTooDeepError, SourceLocation

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

#: Deepest nesting of parentheses / expression nodes accepted (Python's recursion limit
#: is 1,000 frames; the expression walks need a few frames per level).
MAX_NESTING_DEPTH = 200

#: Largest dimension number accepted in convolution ``dim_numbers`` (ranks are far smaller).
MAX_DIMENSION_INDEX = 4096

#: Largest result number accepted in MLIR text (``%0#N``, ``%0:N = ...``).
MAX_RESULT_INDEX = 65536

#: Integers in one 1-d integer ``dense`` attribute / read from one op attribute
#: (dimension lists are rank-sized; ``tensor<2147483648xi64>`` takes MLIR's verifier 40 s).
MAX_ATTRIBUTE_ELEMENTS = 1 << 24

#: Default cap on the points ``IndexingMap.enumerate`` visits.
MAX_ENUMERATION_POINTS = 2_000_000

#: Points enumerated for the exactness of one operand of one tiling
#: (:mod:`hlo_indexing.symbolic_tiling.exactness`); past it the exactness is reported
#: as not computed, with the count.
MAX_EXACTNESS_POINTS = 1 << 20

#: Cases of one value of a Pallas index map, read from its jaxpr or its Mosaic function
#: (:mod:`hlo_indexing.maps.piecewise`): each
#: ``min``/``max``/comparison whose outcome the ranges leave open splits a region in two;
#: past this many, the value becomes an unknown and the checks that need it say so.
MAX_INDEX_MAP_CASES = 64

#: Grid points (times the blocks each touches, for element-level checks) that
#: :mod:`hlo_indexing.pallas` enumerates for a finding the maps do not decide by reasoning
#: (ranges, constraints, the simplifier, separable affine forms); past it the finding is
#: reported as not decided.
MAX_PALLAS_GRID_POINTS = 1 << 20

#: Cells the layout viewer draws.
MAX_VIEWER_CELLS = 20_000

#: Candidate tilings (a grid: per tiling parameter, the powers of two below its size and
#: the size) that ``symbolic_tiling.ranking.rank_tilings`` evaluates per fusion, all at
#: once with numpy; a rank-4 fusion of 1024s has 11**4 = 14641.
MAX_TILING_CANDIDATES = 1 << 16

#: Tilings whose footprint ``rank_tilings`` builds one by one (the per-tiling path, a few
#: ms each) for a fusion whose footprints are not separable.
MAX_FOOTPRINTS_PER_FUSION = 256

#: Rows (programs times the combinations of runtime values the tiles are counted over)
#: of the tilings ``rank_tilings`` builds one by one for a fusion, summed in the order
#: they are built (the fewest programs first): a footprint costs about 1 us per row
#: (a scan step's fusion over 64 start values: 0.2 s for 6,144 programs), so the limit
#: stops a fusion after a few seconds.
MAX_PER_TILING_ROWS = 1 << 21

#: Tile indices (summed over the candidate sizes of the parameters involved) at which
#: ``rank_tilings`` counts the union of the tiles of an operand read through several
#: tiles (a softmax's input); above, the fusion is ranked tiling by tiling.
MAX_UNION_POINTS = 1 << 22

#: Default program limit of a ranked tiling (``rank_tilings(max_programs=)``, option
#: ``max-programs`` of ``hlo-print-tilings``): tilings with more programs are counted as
#: skipped, not evaluated.
MAX_PROGRAMS = 1 << 16

#: Default limit on the tiled instructions (value and indexing map pairs) of one fusion's
#: analysis (``analyze_fusion(max_nodes=)``, option ``max-nodes``); past it the fusion is
#: not tiled, with the reason. Real fusions have about one per instruction.
MAX_TILED_NODES = 20_000

#: Default CPU seconds the tiling passes spend on one computation (analysis, ranking,
#: exactness; option ``fusion-seconds``, 0 for none); past it that computation is
#: reported not tiled and the others are still tiled. Real fusions take milliseconds; the
#: slowest of the JAX library programs we keep back took 14 s (a ranking tiling by tiling
#: over a 4M-element operand).
FUSION_SECONDS = 10.0

#: Tile indices ``rank_tilings`` evaluates in one numpy pass (more are evaluated in
#: batches): bounds its memory whatever its ``max_programs``.
MAX_TILE_INDICES_PER_BATCH = 1 << 20

#: Seconds XLA's parser and translator may take on one HLO module.
HLO_PARSE_SECONDS = 20.0

#: Bytes of address space the isolated HLO parser may add to its parent's.
ISOLATED_MEMORY_BYTES = 4 << 30

#: Seconds one isl proof may take (equality, inclusion or emptiness of maps' relations):
#: isl's projections of quantified variables have no bound of their own.
PROOF_SECONDS = 10.0

#: isl's operation budget per proof (isl counts some of its elementary steps; not all
#: of its algorithms do, hence :data:`PROOF_SECONDS` as well).
ISL_MAX_OPERATIONS = 2_000_000

#: Pieces a semi-affine map may be split into for isl (``maps.exact``): a product of two
#: variables or a division by a variable becomes Presburger once one of them is fixed,
#: one piece per value of its range.
ISL_MAX_CASES = 256


def check_int64(value: int, what: str, location: SourceLocation | None = None) -> int:
    """``value`` if it fits in int64, else :class:`IntegerOverflowError` naming ``what``
    and the value."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise IntegerOverflowError(
            f"{what} = {value} does not fit in int64", location, limit="INT64_MAX", value=value
        )
    return value


def check_depth(depth: int, what: str, location: SourceLocation | None = None) -> None:
    """:class:`NestingTooDeepError` when ``depth`` exceeds :data:`MAX_NESTING_DEPTH`."""
    if depth > MAX_NESTING_DEPTH:
        raise NestingTooDeepError(
            f"{what} is nested {depth} levels deep, more than the limit of {MAX_NESTING_DEPTH} (limits.MAX_NESTING_DEPTH)",
            location,
            limit="MAX_NESTING_DEPTH",
            value=depth,
        )
