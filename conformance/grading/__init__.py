"""Grading a class: ``embconf grade`` over a folder of submissions (package folders, single modules,
percent-format and Jupyter notebooks, zips and folders of several files), each run isolated as ``embconf
run`` runs it, scored by a rubric (data), with a gradebook, feedback, Gradescope results and a class
report; ``embconf.check`` for a student in Jupyter, ``python -i`` or a script.

One job a module (the rule saying where module 11 is, package, course folder, files, is the TinyTorch adapter's:
:mod:`embconf.adapters.tinytorch_layouts`): :mod:`.submissions` (what a folder holds, staging, content hashes),
:mod:`.uploads` (zips and the rule saying which file of an upload is graded), :mod:`.contained` (a submission's
files, no link followed out of it), :mod:`.notebook` (nbdev export cells), :mod:`.job` (grading one submission),
:mod:`.mistakes` (the verdict, the one reader of diagnoses), :mod:`.rubric` and :mod:`.score`, :mod:`.feedback`,
:mod:`.outputs` (the files) through :mod:`.files` (the one writer), :mod:`.report` with :mod:`.template`,
:mod:`.session` (parallel, resumable, shards, merge), :mod:`.command` (the CLI's side), :mod:`.check` with
:mod:`.check_text` (what the student reads) and :mod:`.fresh` (a call in a fresh interpreter, from anywhere);
:mod:`.base_names` (a module importing a name the base package lacks), :mod:`.missing` (an import the environment
or the submission lacks, in one line), :mod:`.pool` (grading processes side by side, as the TA sees them),
:mod:`.roster` (who handed in what), :mod:`.withheld` (text a submission must not carry out of the autograder),
:mod:`.markdown` (text a submission controls, in Markdown) and :mod:`.feedback_html` (the feedback as a page)."""
