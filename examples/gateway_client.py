"""A minimal Hindsight agent: open a replay session, search and read evidence as of its date, forecast.

Usage: HINDSIGHT_URL=http://127.0.0.1:8000 HINDSIGHT_TOKEN=<key> python examples/gateway_client.py <question id>
"""

import os
import sys

import httpx

api = httpx.Client(
    base_url=os.environ.get("HINDSIGHT_URL", "http://127.0.0.1:8000") + "/api/v1",
    headers={"Authorization": f"Token {os.environ['HINDSIGHT_TOKEN']}"},
    timeout=30,
)
question = api.get(f"/questions/{sys.argv[1]}/").raise_for_status().json()
session = api.post("/replays/", json={"question": question["id"]}).raise_for_status().json()
print("simulated date:", session["simulated_date"])
query = " or ".join(word for word in question["title"].split() if len(word) > 3)  # any keyword, best first
hits = api.get("/evidence/articles/", params={"q": query, "session": session["id"], "limit": 5})
read = [
    api.get(f"/evidence/articles/{hit['id']}/", params={"session": session["id"]}).raise_for_status().json()
    for hit in hits.raise_for_status().json()["results"][:3]
]
for article in read:
    print(article["published_at"], article["title"])
forecast = {
    "question": question["id"],
    "session": session["id"],
    "prediction": {"probability": 0.6},
    "sources": [a["id"] for a in read],
    "rationale": f"Read {len(read)} articles before the date.",
}
print(api.post("/forecasts/", json=forecast).raise_for_status().json())
