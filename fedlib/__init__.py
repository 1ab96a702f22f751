"""fedlib: a small, fast core for the FedLog workbook."""
__version__ = "0.1.0"
