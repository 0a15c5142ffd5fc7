"""Why a case failed: known mistakes from the catalogue, measured symptoms, and the run's verdict.

Three parts, ranked together:

- ``replay``: the catalogue of mutants replayed on the case (a match names the
  mistake and its exact fix), including sinusoid mistakes computed in float32
  or float16;
- ``symptoms``: what the error looks like, measured (a constant factor and what
  it equals, which rows differ, which boundary is off, a missing gradient, the
  rotation a rotary output applied, measured by ``rope_fit`` against the models
  of ``rope_models`` ...), for mistakes no catalogue lists;
- ``verdict``: the few mistakes that explain a run's failures, in one line.

A mutant is ruled out of a run only by evidence against it (``compose``): a
case it fails differently for the same reason, or a case it fails that the
implementation passed. A case another mistake stopped first (a crash, another
shape) says nothing about it, and one it explains in part (a second mistake
shows on the same case, or the dtype differs too) names it as one of several.
The rest are ranked by how many of the run's failures they explain; a symptom that a named mutant itself
shows on its case is that mutant's mistake (``identity``), so the verdict names it once. Diagnosis runs in the
runner's process on untrusted outputs: it is bounded in time (``BUDGET_S``) and
never raises into the run (a failure to diagnose is logged and leaves the case
undiagnosed).

The package, one job a module: :mod:`.run` (``diagnose_run``, ``diagnose_case``: the parts together, ranked),
``replay``, ``compose``, ``identity``, ``conditions``, ``claims`` (each cause states only what the run measured),
``symptoms``, ``state`` (a case that passed when run alone: state carried; dynamic NTK state kept),
``suggested`` (an undeclared convention that answers the failures, with its declaration), ``localise`` with
``localise_units`` and ``localise_cases`` (where the differences sit, by the inputs' own structure),
``one_departure`` (a generic reading joined to the one fitted mistake that gives it, where measured), ``difference`` (a
difference said in plain words), ``factors`` (a factor reading as a predicate on
the elements it cites, and k printed with the digits that make it true), ``tinytorch_words`` (a TinyTorch run's
causes said in TinyTorch's terms), ``verdict`` with ``titles``, and the fits of
sinusoid (``sinusoid_fit``) and rotary outputs (``rope_fit`` against ``rope_models``). Importing this package
loads none of them: a run that passed imports only ``verdict``.
"""
