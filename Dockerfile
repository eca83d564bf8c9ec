FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# pg_dump and pg_restore for manage.py backup and restore (15, as the compose file's PostgreSQL).
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-client \
    && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml README.md ./
COPY reviewapp ./reviewapp
COPY scoring ./scoring
RUN pip install --no-cache-dir '.[judges,inspect,s3]'
COPY . .
RUN DJANGO_ENV=production DJANGO_SECRET_KEY=build-only DJANGO_ALLOWED_HOSTS=build \
    python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "reviewapp.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "600"]
