"""A tester's session on a plan: created with its drawn trials, practice rounds, start, pause, finish."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from humantest.drawing import catch_units, draw_units, practice_units
from humantest.models import TestPlan, TestSession, Trial
from humantest.scoring import create_session_submission


class TrialClosed(Exception):
    """The trial (or the round) is not open for answers any more."""


def start_session(plan: TestPlan, tester) -> TestSession:
    """The tester's session on `plan`, created with its drawn trials on the first call."""
    existing = TestSession.objects.filter(plan=plan, tester=tester).first()
    if existing:
        return existing
    # The tester's turn: how many started before (a rotation across testers reads it; two testers
    # starting at the same instant may share a turn, which a rotation only makes less even).
    units = draw_units(plan, tester, turn=TestSession.objects.filter(plan=plan).count())
    catches = catch_units(plan, tester, units)
    try:
        return create_session(plan, tester, units, catches)
    except IntegrityError:
        # The same tester opened the test twice at once: the other request made the session.
        return TestSession.objects.get(plan=plan, tester=tester)


def create_session(plan: TestPlan, tester, units, catches=()) -> TestSession:
    """The session with its trials: the measured units in order, with the catch trials at their
    drawn positions in the same sequence (the measured ones fill the other positions)."""
    catch_at = {position for position, *_ in catches}
    free = (position for position in range(len(units) + len(catches)) if position not in catch_at)
    with transaction.atomic():
        session = TestSession.objects.create(
            plan=plan, tester=tester, submission=create_session_submission(plan, tester)
        )
        Trial.objects.bulk_create(
            [
                Trial(session=session, item_id=item_pk, part=part, context=context, position=position)
                for position, (item_pk, part, context) in zip(free, units, strict=True)
            ]
            + [
                Trial(
                    session=session,
                    item_id=item_pk,
                    part=part,
                    context=context,
                    position=position,
                    phase=Trial.Phase.CATCH,
                )
                for position, item_pk, part, context in catches
            ]
        )
    return session


def start_practice(session: TestSession) -> TestSession:
    """A new practice round over the plan's practice items (as many rounds as the tester wants)."""
    from humantest.qualification import qualification

    if session.status not in (TestSession.Status.BRIEF, TestSession.Status.PRACTICE):
        raise TrialClosed(_("practice is over once the test has started"))
    standing = qualification(session)
    if standing.required and not standing.qualified and not standing.rounds_left:
        raise TrialClosed(
            _("this test allows %(rounds)s practice rounds to qualify") % {"rounds": standing.allowed}
        )
    if session.status == TestSession.Status.PRACTICE and open_trials(session).exists():
        raise TrialClosed(_("finish this practice round first"))
    units = practice_units(session.plan)
    if not units:
        raise TrialClosed(_("this plan has no practice items"))
    with transaction.atomic():
        session.practice_round += 1
        session.status = TestSession.Status.PRACTICE
        session.save(update_fields=["practice_round", "status"])
        Trial.objects.bulk_create(
            [
                Trial(
                    session=session,
                    item_id=item_pk,
                    part=part,
                    context=context,
                    position=index,
                    phase=Trial.Phase.PRACTICE,
                    round=session.practice_round,
                )
                for index, (item_pk, part, context) in enumerate(units)
            ]
        )
    return session


def begin_test(session: TestSession) -> TestSession:
    """The test starts (TrialClosed while a qualification the plan asks for is not reached)."""
    from humantest.qualification import qualification

    if session.status in (TestSession.Status.BRIEF, TestSession.Status.PRACTICE):
        standing = qualification(session)
        if not standing.qualified:
            raise TrialClosed(
                _("the test starts once a practice round has %(needed)s right answers")
                % {"needed": standing.needed}
            )
        session.status = TestSession.Status.RUNNING
        session.started_at = timezone.now()
        session.save(update_fields=["status", "started_at"])
        from humantest.exclusions import fix_rules

        fix_rules(session.plan)  # the first start fixes the plan's exclusion rules
    return session


def pause(session: TestSession) -> TestSession:
    if session.status == TestSession.Status.RUNNING:
        session.status = TestSession.Status.PAUSED
        session.save(update_fields=["status"])
    return session


def resume(session: TestSession) -> TestSession:
    if session.status == TestSession.Status.PAUSED:
        session.status = TestSession.Status.RUNNING
        session.save(update_fields=["status"])
    return session


def finish_session(session: TestSession) -> None:
    from humantest.studies import finished

    TestSession.objects.filter(pk=session.pk).exclude(status=TestSession.Status.FINISHED).update(
        status=TestSession.Status.FINISHED, finished_at=timezone.now()
    )
    session.refresh_from_db(fields=["status", "finished_at"])
    finished(session)  # a participant's study is over: their code can be shown


def open_trials(session: TestSession):
    if session.status == TestSession.Status.PRACTICE:
        trials = session.trials.filter(phase=Trial.Phase.PRACTICE, round=session.practice_round)
    else:
        trials = session.trials.filter(phase__in=Trial.SEQUENCE)
    return trials.filter(status__in=(Trial.Status.WAITING, Trial.Status.SERVED)).order_by("position")
