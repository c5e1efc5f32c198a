#!/usr/bin/env bash
# Sourced by `make test`: point the suite at PostgreSQL and Redis on 127.0.0.1 when they answer.
# An explicit DATABASE_URL or REDIS_URL wins. With WERKBANK_REQUIRE_SERVICES=1 a missing service is an error.
# With WERKBANK_NO_SERVICES=1 nothing is asked: the suite runs as on a machine where neither answers (SQLite,
# no Redis) even where they do, as .ci/run's SQLite pass needs; an explicit DATABASE_URL or REDIS_URL still wins.
if [ "${WERKBANK_NO_SERVICES:-0}" = "1" ]; then
  if [ "${WERKBANK_REQUIRE_SERVICES:-0}" = "1" ]; then
    echo "WERKBANK_NO_SERVICES=1 and WERKBANK_REQUIRE_SERVICES=1 contradict each other" >&2
    return 1 2>/dev/null || exit 1
  fi
  _answers() { return 1; }
  _unheard="is not asked (WERKBANK_NO_SERVICES=1)"
else
  _answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
  _unheard="does not answer"
fi

if [ -z "${DATABASE_URL:-}" ]; then
  if _answers 5432; then
    export DATABASE_URL="postgres://${PGUSER:-postgres}@127.0.0.1:5432/werkbank"
  elif [ "${WERKBANK_REQUIRE_SERVICES:-0}" = "1" ]; then
    echo "WERKBANK_REQUIRE_SERVICES=1 but PostgreSQL does not answer on 127.0.0.1:5432" >&2
    return 1 2>/dev/null || exit 1
  else
    echo "PostgreSQL $_unheard on 127.0.0.1:5432: the tests run on SQLite." >&2
  fi
fi
if [ -z "${REDIS_URL:-}" ]; then
  if _answers 6379; then
    export REDIS_URL="redis://127.0.0.1:6379/15"
  elif [ "${WERKBANK_REQUIRE_SERVICES:-0}" = "1" ]; then
    echo "WERKBANK_REQUIRE_SERVICES=1 but Redis does not answer on 127.0.0.1:6379" >&2
    return 1 2>/dev/null || exit 1
  else
    echo "Redis $_unheard on 127.0.0.1:6379: the system tests are skipped." >&2
  fi
fi
