"""The STE-VQA workflow end to end on the server: submit, rules, review, second opinions, output."""

import io
import zipfile

import pytest

from annotation import exports, queue, selectors, services
from annotation.models import Assignment, QAPair
from evaluation.agreement_reports import dataset_agreement
from plugins.stevqa import formats

pytestmark = pytest.mark.django_db


def truth_pairs(assignment):
    """The sample's own QA pairs for the image (real text, real quadrilaterals)."""
    return [
        {"question": qa["question"], "answer": qa["answer"], "evidence": [float(v) for v in qa["evidence"]]}
        for qa in assignment.task.item.ground_truth["annotation"]
    ]


def submit_truth(project, person, count=None):
    held = queue.claim(project, person)
    pairs = (
        truth_pairs(held)[:count]
        if held.round == 1
        else [
            {"source": pair.pk, "question": pair.question, "answer": pair.answer, "evidence": pair.evidence}
            for pair in services.first_round_pairs(held.task)
        ]
    )
    return services.submit(held, person, version=held.version, pairs=pairs)


def test_a_submit_stores_each_pair_with_its_language_and_first_version(project, people):
    done = submit_truth(project, people["ann"])
    assert done.status == Assignment.Status.SUBMITTED and done.submitted_at is not None
    pairs = list(done.pairs.all())
    assert pairs and all(pair.version == 1 and pair.review == QAPair.Review.PENDING for pair in pairs)
    assert [pair.language for pair in pairs] == [formats.language(pair.question) for pair in pairs]
    assert [r.kind for pair in pairs for r in pair.revisions.all()] == ["written"] * len(pairs)


@pytest.mark.parametrize(
    "question, answer, code",
    [
        ("Is this a bank?", "yes", "yes_no_question"),
        ("这是银行吗？", "银行", "yes_no_question"),
        ("What does the sign say?", "是", "yes_no_answer"),
    ],
)
def test_yes_no_pairs_are_refused_and_nothing_is_stored(project, people, question, answer, code):
    held = queue.claim(project, people["ann"])
    pair = {"question": question, "answer": answer, "evidence": [10, 10, 60, 10, 60, 40, 10, 40]}
    with pytest.raises(services.Refused) as refused:
        services.submit(held, people["ann"], version=held.version, pairs=[pair])
    assert code in [p["code"] for p in refused.value.problems]
    assert all(p["message"] for p in refused.value.problems)
    held.refresh_from_db()
    assert held.status == Assignment.Status.LEASED and not held.pairs.exists()


def test_a_quadrilateral_outside_the_image_or_crossed_is_refused(project, people):
    held = queue.claim(project, people["ann"])
    outside = {"question": "What is the name?", "answer": "x", "evidence": [10, 10, 5000, 10, 60, 40, 10, 40]}
    crossed = {"question": "What is the time?", "answer": "x", "evidence": [10, 10, 60, 40, 60, 10, 10, 40]}
    with pytest.raises(services.Refused) as refused:
        services.submit(held, people["ann"], version=held.version, pairs=[outside, crossed])
    codes = {(p["pair"], p["code"]) for p in refused.value.problems}
    assert (0, "quad_outside") in codes and (1, "quad_not_simple") in codes


def test_reviewer_fix_is_a_new_version_and_the_old_is_kept(project, people):
    done = submit_truth(project, people["ann"])
    pair = done.pairs.first()
    moved = list(pair.evidence)
    moved[0] += 3
    services.review(
        pair,
        people["rev"],
        version=pair.version,
        action="fix",
        question=pair.question,
        answer=pair.answer,
        evidence=moved,
    )
    pair.refresh_from_db()
    assert pair.review == QAPair.Review.FIXED and pair.version == 2 and pair.evidence[0] == moved[0]
    kinds = [(r.version, r.kind, r.author.username) for r in pair.revisions.all()]
    assert kinds == [(1, "written", "ann"), (2, "fixed", "rev")]
    assert pair.revisions.get(version=1).evidence[0] == moved[0] - 3


def test_a_stale_review_is_refused_with_the_current_version(project, people):
    done = submit_truth(project, people["ann"])
    pair = done.pairs.first()
    services.review(pair, people["rev"], version=1, action="accept")
    with pytest.raises(queue.Stale) as stale:
        services.review(pair, people["rev"], version=1, action="reject", reason="blurred")
    assert stale.value.server["review"] == "accepted" and stale.value.server["version"] == 2
    pair.refresh_from_db()
    assert pair.review == QAPair.Review.ACCEPTED


def test_a_rejection_sends_the_task_back_to_its_annotator_with_the_reason(project, people):
    done = submit_truth(project, people["ann"])
    pair = done.pairs.first()
    services.review(pair, people["rev"], version=1, action="reject", reason="the quad misses the last letter")
    done.refresh_from_db()
    assert done.status == Assignment.Status.RETURNED and "misses the last letter" in done.return_reason
    back = queue.claim(project, people["ann"])
    assert back.pk == done.pk and back.draft["pairs"]  # the submitted pairs are the draft again
    pairs = back.draft["pairs"]
    pairs[0]["evidence"] = [v + 1 for v in pairs[0]["evidence"]]
    services.submit(back, people["ann"], version=back.version, pairs=pairs)
    pair.refresh_from_db()
    # Version 2 was the rejection; the resubmitted text is version 3, waiting for review again.
    assert pair.version == 3 and pair.review == QAPair.Review.PENDING
    assert [r.version for r in pair.revisions.all()] == [1, 3]


def test_second_opinion_agreement_and_publishing(project, people):
    ann, bob, rev = people["ann"], people["bob"], people["rev"]
    # Work through the whole project: whoever is free takes the next task.
    for _ in range(40):
        progressed = False
        for person in (ann, bob):
            held = queue.claim(project, person)
            if held is None:
                continue
            progressed = True
            if held.round == 1:
                services.submit(held, person, version=held.version, pairs=truth_pairs(held))
            else:
                given = services.first_round_pairs(held.task)
                answers = [
                    {
                        "source": pair.pk,
                        "question": pair.question,
                        "answer": pair.answer if i else pair.answer + "!",
                        "evidence": [v + 2 for v in pair.evidence],
                    }
                    for i, pair in enumerate(given)
                ]
                services.submit(held, person, version=held.version, pairs=answers)
        if not progressed:
            break
    progress = selectors.progress(project)
    assert progress["first_done"] == progress["tasks"] and progress["second_done"] == progress["doubled"] > 0
    result = selectors.second_opinion_agreement(project, resamples=200)
    overall = result["groups"][0]
    assert overall["group"] == "all" and overall["questions"] == len(result["rows"]) > 0
    assert 0.5 < overall["text"].value < 1 and 0.5 < overall["iou"].value < 1
    assert overall["text"].low <= overall["text"].value <= overall["text"].high

    with pytest.raises(services.NothingToPublish):
        services.publish(project)
    for pair in QAPair.objects.filter(assignment__task__project=project, assignment__round=1):
        services.review(pair, rev, version=pair.version, action="accept")
    dataset, counts = services.publish(project)
    assert counts["images"] == progress["tasks"] and dataset.has_media
    again, _ = services.publish(project)  # publishing again makes the next version
    assert (dataset.version, again.version) == ("1", "2") and again.name == dataset.name
    # The published file is the benchmark's own: it round-trips through the importer's parser.
    name, _, body = exports.export(project, "train")
    parsed = formats.parse(body)
    assert len(parsed.records) == counts["images"]
    # Second opinions became annotator submissions on the new dataset; agreement compares them.
    report = dataset_agreement(dataset, resamples=50)
    assert report  # the existing agreement statistics see the annotators as raters
    names = set(dataset.submissions.filter(producer="annotator").values_list("name", flat=True))
    assert {"ann (second opinion)", "bob (second opinion)"} & names or any(
        "second opinion" in n for n in names
    )
    assert any("first annotation" in n for n in names)


def test_icdar_export_writes_one_file_per_image_with_integer_corners(project, people):
    done = submit_truth(project, people["ann"])
    for pair in done.pairs.all():
        services.review(pair, people["rev"], version=pair.version, action="accept")
    _, content_type, body = exports.export(project, "icdar")
    archive = zipfile.ZipFile(io.BytesIO(body))
    (member,) = archive.namelist()
    lines = archive.read(member).decode().splitlines()
    assert len(lines) == done.pairs.count()
    fields = lines[0].split(",", 8)
    assert all(value.lstrip("-").isdigit() for value in fields[:8]) and fields[8] == done.pairs.first().answer


def test_the_demo_pairs_carry_what_ocr_reads_once_the_worker_has_run(
    demo_stevqa, django_capture_on_commit_callbacks
):
    from annotation.demo import create_demo_project
    from benchmarks import registry
    from yardstick.management.commands.load_demo import create_demo_users

    create_demo_users()
    with django_capture_on_commit_callbacks(execute=True):  # the worker (in-process in the tests)
        name = create_demo_project(registry.get("stevqa"), demo_stevqa)
    pairs = QAPair.objects.filter(assignment__task__project__name=name)
    assert pairs.count() >= 3
    # The demo reviewer sees what OCR read in each pair's evidence, not "OCR read –".
    assert all(pair.ocr_similarity is not None for pair in pairs)
    assert sum(pair.ocr_similarity >= 0.5 for pair in pairs) >= len(pairs) // 2
