"""A minimal Hindsight agent with the client package: open a replay session, search and read evidence
as of its date, forecast.

Usage: HINDSIGHT_URL=http://127.0.0.1:8000 HINDSIGHT_TOKEN=<key> python examples/gateway_client.py <question id>
"""

import sys

from hindsight_client import Client

with Client() as hs:  # HINDSIGHT_URL and HINDSIGHT_TOKEN from the environment
    question = hs.question(int(sys.argv[1]))
    session = hs.open_replay(question)
    print("simulated date:", session.simulated_date)
    query = " or ".join(word for word in question.title.split() if len(word) > 3)  # any keyword, best first
    hits = hs.search_articles(query, session=session, limit=5).results
    read = [hs.read_article(hit.id, session=session) for hit in hits[:3]]
    for article in read:
        print(article.published_at, article.title)
    forecast = hs.submit_forecast(
        question,
        {"probability": 0.6},
        session=session,
        sources=[article.id for article in read],
        rationale=f"Read {len(read)} articles before the date.",
    )
    print(f"forecast {forecast.id}: {forecast.prediction} ({forecast.grade_status})")
