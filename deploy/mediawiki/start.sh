#!/bin/bash
# Start script of compose.yaml's mediawiki service (mounted read-only at
# /usr/local/bin/wikiedge-mediawiki-start; the official mediawiki:1.39 image and the podman
# stand-in in deploy/podman/standins/mediawiki both run it with bash).
#
#   wikiedge-mediawiki-start               first run: create the wiki's database; then Apache
#   wikiedge-mediawiki-start healthcheck   exit 0 when api.php answers siteinfo (compose's check)
#
# First run. The database lives in the mediawiki-data volume (/var/www/data); while it has no
# wikiedge.sqlite, install.php creates it, with the admin password from the
# mediawiki_admin_password secret. install.php refuses to run while a LocalSettings.php exists,
# so it is pointed at one that does not exist (MW_CONFIG_FILE, which MediaWiki 1.39 honours) and
# writes its own LocalSettings.php to a temporary folder, which is deleted: the one in use stays
# deploy/mediawiki/LocalSettings.php. --dbname and --dbpath must match $wgDBname and
# $wgSQLiteDataDir there. To start over: `docker compose down -v` (deletes the wiki's database).
set -euo pipefail

DATA=/var/www/data
DB=$DATA/wikiedge.sqlite
PASSFILE=/run/secrets/mediawiki_admin_password

if [ "${1:-}" = healthcheck ]; then
  # api.php answers with a 2xx and a MediaWiki generator (file_get_contents fails on 4xx/5xx).
  exec php -r '$b = @file_get_contents("http://127.0.0.1/w/api.php?action=query&meta=siteinfo&format=json");
    exit($b !== false && strpos($b, "\"generator\":\"MediaWiki ") !== false ? 0 : 1);'
fi

# The image serves MediaWiki at "/"; this also serves it at "/w", so that /w/api.php works
# ($wgScriptPath = '/w', and the gateway's default WIKIEDGE_API_PATH).
echo 'Alias /w /var/www/html' > /etc/apache2/conf-enabled/wikiedge-w.conf

if [ ! -s "$DB" ]; then
  [ -s "$PASSFILE" ] || {
    echo "wikiedge-mediawiki-start: no database yet, and no admin password in $PASSFILE (see compose.yaml)" >&2
    exit 1
  }
  echo "wikiedge-mediawiki-start: first run, creating the wiki's database in $DATA" >&2
  conf=$(mktemp -d)
  MW_CONFIG_FILE=/nonexistent.php php maintenance/install.php --quiet \
    --dbtype sqlite --dbpath "$DATA" --dbname wikiedge \
    --server "${MW_SERVER:-http://localhost:8080}" --scriptpath /w --lang en \
    --confpath "$conf" --passfile "$PASSFILE" "Wikiedge Demo" Admin
  rm -rf "$conf"
  chown -R www-data:www-data "$DATA"
fi

exec apache2-foreground
