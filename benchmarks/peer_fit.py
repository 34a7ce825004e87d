"""A smartnoise-synth peer (AIM, MST) fitted as ``privsyn fit`` would be: same file, same encoding.

Run it with the Python of an environment that has smartnoise-synth and this
package (``pip install smartnoise-synth -e .``; smartnoise pins its own stack,
so it lives apart from the package's). The table is read and encoded exactly
as ``privsyn fit --domain`` reads and encodes it (every column's codes:
categories, bins of numbers, missing codes), the peer is fitted on the codes
with every column categorical, ``n`` rows of codes are sampled and decoded
back to values as ``privsyn fit`` decodes its own (``QueryWorkload.decode``),
and written as CSV. ``benchmarks/real_tables.py --algorithm aim`` calls it.

Caveat: smartnoise's categorical transformer learns each column's categories
from the codes present in the data (it does not take the public domain),
which is outside its privacy guarantee; the measured accuracy is unaffected.

Usage::

    /work/venvs/peers-sn/bin/python benchmarks/peer_fit.py data.csv --domain domain.json \\
        --epsilon 1 --seed 0 --synth aim -o synthetic.csv [--options '{"degree": 2}']
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings

import numpy as np
import pandas as pd


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("--domain", required=True)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--synth", default="aim")
    parser.add_argument("--options", default="{}", help="JSON keyword arguments of the peer")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)

    from snsynth import Synthesizer

    from sklearn_privsyn import QueryWorkload
    from sklearn_privsyn.cli import read_table
    from sklearn_privsyn.domain_file import read_domain, workload_params

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a drafted domain warns that it was read from the data
        params = read_domain(args.domain)
        frame, _ = read_table(args.input, params)
        spec = workload_params(args.domain)
        # a derived column is computed from its source at decode, as in privsyn fit
        derived = set(spec.get("derived") or ())
        modelled = [c for c in frame.columns if c not in derived]
        workload = QueryWorkload(**spec, marginals=[(c,) for c in modelled]).fit(frame)
    columns = [str(c) for c in modelled]
    codes = pd.DataFrame(workload.encode(frame), columns=columns)
    n = len(frame)
    np.random.seed(args.seed)
    options = {"delta": 1.0 / n**2, **json.loads(args.options)}
    model = Synthesizer.create(args.synth, epsilon=args.epsilon, **options)
    model.fit(codes, categorical_columns=columns, preprocessor_eps=0.0)
    sample = model.sample(n)[columns].to_numpy(dtype=np.int64)
    synthetic = workload.decode(sample, random_state=args.seed)
    synthetic.columns = frame.columns
    synthetic.to_csv(args.output, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
