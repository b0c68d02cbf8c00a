"""What ouro observes for itself, below every domain that relies on it.

- ``ouro.proof.checkrun``: running a declared check like a CI step (claims'
  ``--check`` and tasks' ``--check`` alike), and which checks may run unasked;
- ``ouro.proof.refs``: source refs (a claim's or a task's ``about``, evidence
  sources): where each lives, its content hash, a cheap stat fingerprint;
- ``ouro.proof.redact``: the one redactor every write and every render applies.

They import only the bundle, the store and the models, so Arc, Desk, the talk
packages, sentinel, habits and the front ends all share them without importing
one another.
"""
