"""The two engines: exact (Poisson-binomial, beta mixtures) and Monte Carlo."""
