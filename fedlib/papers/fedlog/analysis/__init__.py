"""FedLog's computation that is not a run of one configuration: Fig. 1's synthetic rounds (`synthetic`), Thms. 3-5
measured (`convergence`), the Gaussian-representation checks of Sec. 3.4 and FedProf's Props. 1-2
(`representations`, read into notebook 04's numbers by `gaussian`), and the FedDBE cross-check's rule (`crosscheck`), the DP runs' readings (`dp`) and Table 1's and
Table A.1's (`table1`). Everything under a paper's `analysis` is
numeric code: the code fingerprint covers it (`provenance.numeric_modules`)."""
from . import convergence, crosscheck, dp, gaussian, representations, synthetic, table1

__all__ = ["convergence", "crosscheck", "dp", "gaussian", "representations", "synthetic", "table1"]
