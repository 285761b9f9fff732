"""The six measurements of issue 6, one module each (answering.py covers 2, 3 and 4)."""
