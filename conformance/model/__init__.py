"""The ground floor: the spec's nouns in code. Everything else imports from here; this imports nothing above it.

Rooms:
- ``vocabulary``: where ``spec/`` and ``fixtures/`` live, and ``spec/vocabulary.json`` read once (operations,
  features, error kinds, and the spec's structure: areas, requirement families, sections).
- ``family``: an operation family declared once (:class:`Family`: a spec area, its operations as the vocabulary
  places them, its requirements); each layer keys its table by the family's area.
- ``convention``: the one :class:`Convention` protocol (a sinusoid profile, a rotary or a bag convention) and each
  kind of convention as data (:class:`ConventionKind`: its area, features, declaration, claim clause);
  ``claimable_features`` once.
- ``features``: what claimed features imply: the exclusive pairs, and why a case of an unclaimed feature does not
  apply.
- ``arrays``: the type names of the operations' signatures (an array, a layer's config, a table, a scaling).
- ``dtypes``, ``encoding``: the value types of the spec and their fixture and wire encodings.
- ``schemas``: the JSON Schemas of ``spec/schemas``.
- ``outcomes``: what one case ends in (:class:`Outcome`) and the result of one case.
- ``record``: the run record (every case, the causes of its failures, its verdict) that every report derives from.
- ``symptom``: what a measured symptom is, typed (:class:`SymptomKey`: its family and parts, one rendering).
- ``sinusoid``: the sinusoid family (EMB-SIN-6): a point's parameters, the named profiles, how one is declared.
- ``rope_conventions``: the rotary conventions an implementation may declare (EMB-ROPE-V1..V3).
- ``bag``: bags (spec 2.1.0, section 16): the modes, the bag features and those a bag case's inputs imply.
- ``bag_conventions``: the bag conventions an implementation may declare (EMB-BAG-V1, V2).
- ``quantized``: quantized tables (spec 2.3.0, section 17): the formats by name, their row bytes, their features.
- ``quantize_conventions``: the quantize conventions an implementation may declare (EMB-QNT-V1..V4).
- ``declarations``: what the kinds of convention share: :class:`ConventionKind`, a declared list of names read
  into an enum's members and the kind built from it, the claim's clause.
- ``rope``: rotary position embeddings (spec 1.3.0, section 14): the pairings, the scaling families and the
  typed form of a ``scaling`` input (:class:`RopeScaling`), and the rope features.
- ``contract``: what an adapter is (the :class:`Adapter` Protocol), what it answers (:class:`Reply`), what it claims,
  and the deviations it cites as the framework's documented design (:class:`DocumentedChoice`).
- ``impl``: what ``--impl KIND:TARGET`` names, parsed once (:class:`Impl`).
- ``exits``: the exit codes of every command, named once (OK, FAILED, USAGE, INTERRUPTED, a signal's).
- ``budget``: how long one call may take: the case timeout plus an allowance for the case's work.
- ``claim``: the claim a run supports, said the same by ``embconf run`` and ``embconf matrix``.
- ``version``: the suite's own version.
- ``errors``: :class:`UserError`, the one exception meaning "say it in one line, exit 2", and :class:`Decline`,
  an implementation declining one case.
"""
