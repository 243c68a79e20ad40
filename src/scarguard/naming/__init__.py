"""Naming failures: signatures and their bank, blame, and the waits errors ask for.

- :mod:`~scarguard.naming.signatures`: :class:`SignatureBank`, the fallback signature of
  unrecognised errors;
- :mod:`~scarguard.naming._signature`: :class:`Signature`, the value both build on;
- :mod:`~scarguard.naming.bank`: the default bank's order, over its data by domain
  (``_bank_ml``, ``_bank_services``, ``_bank_code``, ``_bank_shell``);
- :mod:`~scarguard.naming.blame`: who is to blame for a failure;
- :mod:`~scarguard.naming.classify`: an error's text, exception types and status code;
- :mod:`~scarguard.naming.retry_after`: how long an error asks to wait.
"""
