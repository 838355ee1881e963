"""datatrove's MinHash deduplication example pipeline (``examples/minhash_deduplication.py``
of datatrove) on one JSON-lines feed, on this machine:

    python -m benchmarks.thorough.minhash FEED.jl WORKDIR [--tasks N]

The four stages of the example with its configuration (``MinhashConfig`` with 64-bit
xxhash, 14 buckets of 8 hashes, 5-grams, the default text normalisation and English word
tokenizer), each run with ``LocalPipelineExecutor`` (``--tasks``, default 1; the clustering
stage has one task, as in the example). The only additions to the example: stage 3 saves
the cluster ids and stage 4 loads them, so that each removed document can be paired with
the kept member of its cluster; the kept documents are written to ``WORKDIR/output`` and
the removed ones to ``WORKDIR/removed`` (JSON lines, gzip).
"""

from __future__ import annotations

import argparse
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("feed", type=Path)
    parser.add_argument("workdir", type=Path)
    parser.add_argument("--tasks", type=int, default=1)
    args = parser.parse_args(argv)

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers.jsonl import JsonlWriter
    from datatrove.utils.hashing import HashConfig
    from datatrove.utils.typeshelper import Languages

    config = MinhashConfig(
        hash_config=HashConfig(precision=64), num_buckets=14, hashes_per_bucket=8
    )
    work = args.workdir
    logs = work / "logs"

    def reader():
        return JsonlReader(
            str(args.feed.parent),
            glob_pattern=args.feed.name,
            text_key="text",
            id_key="url",
            compression=None,
        )

    tasks = args.tasks
    stage1 = LocalPipelineExecutor(
        pipeline=[
            reader(),
            MinhashDedupSignature(
                output_folder=str(work / "signatures"), config=config, language=Languages.english
            ),
        ],
        tasks=tasks,
        workers=tasks,
        logging_dir=str(logs / "signatures"),
    )
    stage2 = LocalPipelineExecutor(
        pipeline=[
            MinhashDedupBuckets(
                input_folder=str(work / "signatures"),
                output_folder=str(work / "buckets"),
                config=config,
            )
        ],
        tasks=config.num_buckets,
        workers=tasks,
        logging_dir=str(logs / "buckets"),
        depends=stage1,
    )
    stage3 = LocalPipelineExecutor(
        pipeline=[
            MinhashDedupCluster(
                input_folder=str(work / "buckets"),
                output_folder=str(work / "remove_ids"),
                config=config,
                save_cluster_id=True,
            )
        ],
        tasks=1,
        logging_dir=str(logs / "clusters"),
        depends=stage2,
    )
    stage4 = LocalPipelineExecutor(
        pipeline=[
            reader(),
            MinhashDedupFilter(
                input_folder=str(work / "remove_ids"),
                exclusion_writer=JsonlWriter(str(work / "removed")),
                load_cluster_ids=True,
            ),
            JsonlWriter(output_folder=str(work / "output")),
        ],
        tasks=tasks,
        workers=tasks,
        logging_dir=str(logs / "filter"),
        depends=stage3,
    )
    stage4.run()


if __name__ == "__main__":
    main()
