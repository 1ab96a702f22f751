"""fedlib: a small, fast core for the FedLog workbook."""
import os

# PyTorch's CPU allocator asks for huge pages for allocations of 2 MB and more (madvise): the fresh 40 MB temporaries
# of wide layers then cost a few ms instead of 20-35 ms of page faults. It changes no number. Read when torch first
# allocates, so it is set here, before fedlib imports torch; a process that imported torch first keeps its setting.
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")

__version__ = "0.1.0"
