FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# pg_dump and pg_restore for manage.py backup and restore (15, as the compose file's PostgreSQL).
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-client \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml setup.py README.md ./
COPY reviewapp ./reviewapp
COPY scoring ./scoring
# Installed in place (-e) so the compiled number reader is built beside
# scoring/numbers.py, which is what /app imports; the compiler goes again
# in the same layer.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && pip install --no-cache-dir -e '.[judges,inspect,s3]' \
    && apt-get purge -y --auto-remove gcc libc6-dev && rm -rf /var/lib/apt/lists/*
COPY . .
RUN DJANGO_ENV=production DJANGO_SECRET_KEY=build-only DJANGO_ALLOWED_HOSTS=build \
    python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "reviewapp.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "600"]
