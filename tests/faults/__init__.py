"""Fault and load tests for the stores: killed writers, crashed servers, full disks, cancelled
calls, and many writers at once (``docs/stores.md``, "Failure behaviour", says what each shows).
"""
