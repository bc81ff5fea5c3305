# The bot, installed from this repository's own files, run as a non-root user.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN useradd --create-home --uid 10001 resistance
WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY deduction ./deduction
COPY agents ./agents
COPY tgbot ./tgbot
RUN pip install .

USER resistance
# Webhook mode listens on WEBHOOK_PORT (8080 by default); polling mode needs no port.
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import os, sys, urllib.request; sys.exit(0) if os.environ.get('BOT_MODE', 'polling') != 'webhook' else urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('WEBHOOK_PORT', '8080') + '/healthz', timeout=4)"
CMD ["resistance-bot"]
