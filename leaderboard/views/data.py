"""Open data: the datasets page and its CSV and JSON downloads (see leaderboard.exports)."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone

from leaderboard.exports import DATASETS, csv_lines, json_chunks


def data_page(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "leaderboard/data.html",
        {
            "datasets": [(d, d.rows().count()) for d in DATASETS.values()],
            "licence": settings.HINDSIGHT_DATA_LICENCE,
        },
    )


def data_download(request: HttpRequest, name: str, fmt: str) -> StreamingHttpResponse:
    dataset = DATASETS.get(name)
    if dataset is None or fmt not in ("csv", "json"):
        raise Http404(f"No dataset {name}.{fmt}; the datasets are listed at /data/.")
    generated = timezone.now().replace(microsecond=0)
    if fmt == "csv":
        response = StreamingHttpResponse(csv_lines(dataset), content_type="text/csv; charset=utf-8")
    else:
        header = {
            "dataset": dataset.name,
            "title": f"Hindsight {dataset.title.lower()}",
            "description": dataset.description,
            "generated_at": generated.isoformat(),
            "licence": settings.HINDSIGHT_DATA_LICENCE,
            "source": request.build_absolute_uri("/data/"),
        }
        response = StreamingHttpResponse(json_chunks(dataset, header=header), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="hindsight-{name}-{generated:%Y-%m-%d}.{fmt}"'
    response["X-Data-Licence"] = settings.HINDSIGHT_DATA_LICENCE
    return response
