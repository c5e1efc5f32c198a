"""The global search page (`/pm/search/?q=`), for PMs and partners' members.

An exact match of one object the user may open goes straight to its page (302); otherwise the page lists
what was found, grouped by kind. A query longer than `pm.search.MAX_QUERY_LENGTH` is a 400 page that
names the field and the rule (nothing is searched). Anonymous visitors log in first; customers and users of
no organization get a 404, as for any page that is not theirs. The search itself is pm.search.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from pm import search as finder
from werkbank.errors import InvalidInput


@require_GET
@login_required
def search_page(request: HttpRequest) -> HttpResponse:
    """Search everything the user may see for `q`; go to the one exact match, or list the matches."""
    if not finder.may_search(request.user):
        raise Http404("No such page.")
    try:
        query = finder.clean_query(request.GET.get("q"))
    except InvalidInput as error:
        context = {
            "query": request.GET.get("q", "")[: finder.MAX_QUERY_LENGTH],
            "error": error,
            "max_length": finder.MAX_QUERY_LENGTH,
        }
        return TemplateResponse(request, "pm/search.html", context, status=400)
    results = finder.search(user=request.user, query=query)
    if results.exact is not None and results.exact.url:
        return HttpResponseRedirect(results.exact.url)
    return TemplateResponse(
        request,
        "pm/search.html",
        {
            "query": query,
            "results": results,
            "max_length": finder.MAX_QUERY_LENGTH,
            "min_partial": finder.MIN_PARTIAL_LENGTH,
        },
    )
