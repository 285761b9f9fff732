"""The benchmark's measurements, one module each (answering.py covers several)."""
