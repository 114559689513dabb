"""The home page: each role sees where its work is."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from accounts.roles import ADMIN, ANNOTATOR, RESEARCHER, REVIEWER, TESTER, user_roles
from annotation.selectors import projects_for_researcher
from annotation.views import work_context
from benchmarks.selectors import datasets_for, import_jobs_for
from humantest.selectors import plans_for_researcher, sessions_for_tester


@login_required
def home(request):
    roles = user_roles(request.user)
    context = {"user_roles": roles}
    if RESEARCHER in roles or ADMIN in roles:
        context["datasets"] = datasets_for(request.user)[:20]
        context["jobs"] = import_jobs_for(request.user)[:5]
        context["plans"] = plans_for_researcher(request.user)[:10]
        context["annotation_projects"] = projects_for_researcher(request.user)[:10]
    if ANNOTATOR in roles or REVIEWER in roles:
        context.update(work_context(request.user))
    if TESTER in roles:
        context["entries"] = sessions_for_tester(request.user)
    return render(request, "home.html", context)
