"""Train on differentially private synthetic data, test on real data (UCI Adult).

A classifier predicting ``income`` is trained twice: once on the real
training rows, once on synthetic rows produced by FEM (or, with
``--algorithm adaptive``, AdaptiveProjection) at a modest privacy budget.
Both are tested on the real held-out rows (``adult.test``). The synthetic
data is fitted on a small workload: every 2-way marginal between a feature
and the target, which is what a classifier needs most (``--workload
income3``: every marginal of up to 3 columns that holds the target).

Run it with ``python examples/train_on_synthetic.py`` (one to two minutes on two
cores; ``--help`` for options). The test scores read real data and are for
the data owner; the synthetic-data model itself is
``(epsilon, delta)``-differentially private with respect to the training rows.
"""

import argparse
import itertools
import time

from sklearn.compose import make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_privsyn import FEM, AdaptiveProjection, QueryWorkload, SyntheticDataTrainer
from sklearn_privsyn.datasets import adult_public_domain, load_adult

TARGET = "income"
NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


def make_model(categorical):
    """One-hot categorical columns, scale numbers, logistic regression."""
    encode = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), categorical),
        (StandardScaler(), NUMERIC),
    )
    return make_pipeline(encode, LogisticRegression(max_iter=2000))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilon", type=float, default=1.0, help="privacy budget (default 1)")
    parser.add_argument("--samples-per-round", type=int, default=20,
                        help="FEM samples per round (default 20)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="FEM rounds (default: derived from the budget)")
    parser.add_argument("--solver", default="heuristic",
                        help="oracle (default heuristic: fast, and privacy does not depend "
                             "on it; 'highs' is exact and slower)")
    parser.add_argument("--algorithm", choices=["fem", "adaptive"], default="fem")
    parser.add_argument("--workload", choices=["pairs", "income3"], default="pairs",
                        help="pairs: (feature, income) marginals; income3: every marginal "
                             "of up to 3 columns holding income")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    train, test = load_adult(split="train"), load_adult(split="test")
    X_train, y_train = train.drop(columns=TARGET), train[TARGET]
    X_test, y_test = test.drop(columns=TARGET), test[TARGET]
    categorical = [c for c in X_train.columns if c not in NUMERIC]

    # The workload, on a public domain: (feature, income) for every feature, or
    # every marginal of up to 3 columns that holds income.
    if args.workload == "pairs":
        marginals = [(column, TARGET) for column in X_train.columns]
    else:
        marginals = [(TARGET,)] + [
            (*combo, TARGET) for k in (1, 2)
            for combo in itertools.combinations(X_train.columns, k)
        ]
    workload = QueryWorkload(**adult_public_domain(), marginals=marginals,
                             random_state=args.seed)
    if args.algorithm == "fem":
        synthesizer = FEM(epsilon=args.epsilon, workload=workload, rounds=args.rounds,
                          samples_per_round=args.samples_per_round, solver=args.solver,
                          random_state=args.seed)
    else:
        synthesizer = AdaptiveProjection(epsilon=args.epsilon, workload=workload,
                                         random_state=args.seed)

    results = []
    start = time.perf_counter()
    real_model = make_model(categorical).fit(X_train, y_train)
    results.append(("trained on real rows", real_model, time.perf_counter() - start))

    start = time.perf_counter()
    private_model = SyntheticDataTrainer(synthesizer, make_model(categorical),
                                         random_state=args.seed)
    private_model.fit(X_train, y_train)
    results.append(("trained on synthetic rows", private_model, time.perf_counter() - start))

    print(f"UCI Adult: {len(X_train):,} training rows, {len(X_test):,} real test rows")
    print(f"workload: {len(workload.marginals)} marginals ({args.workload}, all with {TARGET})")
    fitted = private_model.synthesizer_
    print(f"synthetic data: {type(fitted).__name__}, {fitted._output_description()}; "
          f"privacy spent (epsilon={private_model.epsilon_:.3f}, "
          f"delta={private_model.delta_:.2g})")
    majority = (y_test == y_train.mode()[0]).mean()
    print(f"\n{'model':<28}{'accuracy':>10}{'ROC AUC':>10}{'fit s':>8}")
    print(f"{'majority class':<28}{majority:>10.3f}{0.5:>10.3f}{'':>8}")
    for name, model, seconds in results:
        accuracy = model.score(X_test, y_test)
        positive = list(model.classes_).index(">50K")
        auc = roc_auc_score(y_test == ">50K", model.predict_proba(X_test)[:, positive])
        print(f"{name:<28}{accuracy:>10.3f}{auc:>10.3f}{seconds:>8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
