"""Tests of the adapters to agent frameworks (threadline.interop)."""
