"""What FedProf (Wu et al.; seeds/004) reports: Table 3 (the L-Task, EMNIST digits) and Table 2 (the S-Task,
GasTurbine): best accuracy (%), rounds, time (s) and energy (Wh) to the target. Typed from the paper, nothing else."""
TABLE3 = {  # L-Task (EMNIST digits), (aggregation, C) -> method -> (best acc %, rounds, time s, energy Wh) to 90%
    ("full", 0.05): {"FedAvg": (90.6, 213, 10407.30, 60.01), "CFCFM": (92.3, 251, 8645.17, 61.37), "FedProf": (92.6, 98, 4846.15, 28.22)},
    ("full", 0.1): {"FedAvg": (92.9, 76, 3894.26, 43.16), "CFCFM": (93.2, 75, 2675.56, 37.62), "FedProf": (94.5, 45, 2295.03, 25.98)},
    ("partial", 0.05): {"FedAvg-RP": (93.7, 12, 572.90, 3.29), "FedProx": (93.6, 13, 640.01, 3.58), "FedAdam": (94.0, 12, 599.96, 3.47),
                        "AFL": (95.2, 10, 479.73, 2.73), "FedProf": (96.2, 8, 383.94, 2.26)},
    ("partial", 0.1): {"FedAvg-RP": (93.8, 12, 603.94, 6.57), "FedProx": (94.2, 11, 559.16, 5.91), "FedAdam": (93.9, 12, 608.85, 6.76),
                       "AFL": (94.4, 9, 476.62, 5.26), "FedProf": (96.2, 8, 413.16, 4.64)}}
TABLE2 = {  # S-Task (GasTurbine), target 80%
    ("full", 0.2): {"FedAvg": (80.5, 56, 2869.66, 2.87), "CFCFM": (80.6, 39, 1230.81, 1.61), "FedProf": (82.4, 16, 803.74, 0.80)},
    ("full", 0.3): {"FedAvg": (80.6, 52, 3160.01, 4.12), "CFCFM": (80.2, 42, 1495.34, 2.91), "FedProf": (82.7, 12, 701.18, 0.94)},
    ("partial", 0.2): {"FedAvg-RP": (81.9, 13, 735.48, 0.71), "FedProx": (82.1, 16, 899.93, 0.79), "FedAdam": (81.8, 8, 438.20, 0.42),
                       "AFL": (81.6, 6, 313.81, 0.30), "FedProf": (84.4, 5, 283.76, 0.27)},
    ("partial", 0.3): {"FedAvg-RP": (81.7, 8, 466.90, 0.64), "FedProx": (81.0, 16, 841.65, 1.08), "FedAdam": (81.9, 12, 667.00, 0.94),
                       "AFL": (81.3, 6, 298.81, 0.42), "FedProf": (84.1, 4, 235.22, 0.35)}}

# The paper's words each claim of notebook 08 tests (seeds/004; tests/test_claims_quotes.py finds each in it)
QUOTES = {
    "rounds": "In the L-Task with $C=0.05$ , our algorithm reaches 90% accuracy within 100 rounds whilst FEDAVG and "
              "CFCFM need more than 200",
    "best": "our FEDPROF algorithm improves the accuracy achieved by 2.5% when compared against the baselines (FEDAVG "
            "and FEDAVG-RP)",
    "selection": "In the L-Task our algorithm also effectively limits (basically excludes) the clients who owns the "
                 "image data of poor quality (i.e., irrelevant or severely blurred)",
    "fig1": "training over clients with problematic or strongly biased data can compromise the efficiency and "
            "efficacy of FL, resulting in an inferior global model that takes more rounds to converge",
    # Prop. 1, read in FedLog's notebook 04 (its Gaussian representations)
    "prop1": "The representations from linear operators (e.g., a pre-activation dense layer or a plain convolutional "
             "layer) in a neural network tend to follow the Gaussian distribution",
}
