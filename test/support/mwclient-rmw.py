"""A bot's read-modify-write with mwclient (Debian's python3-mwclient), right after another
user's edit: the scenario of test/integration/mwclient-read-modify-write.test.ts.

Usage: python3 mwclient-rmw.py BOT_HOST:PORT OTHER_HOST:PORT TITLE  (credentials in the environment:
BOT_USER, BOT_PASS, OTHER_USER, OTHER_PASS). The bot talks to BOT_HOST (the wiki, or the gateway);
the other user always edits straight at the wiki. Prints one JSON line: what the bot read first,
what it read before editing, the edit's result, and how many edit requests it sent.
"""
import json
import os
import sys

import mwclient

bot_host, other_host, title = sys.argv[1], sys.argv[2], sys.argv[3]


def site(host, user, password):
    # No retries: a conflict or an error must show, not hide in a retry.
    s = mwclient.Site(host, path='/w/', scheme='http', max_retries=0, clients_useragent='wikiedge-test (mwclient)')
    s.login(user, password)
    return s


bot = site(bot_host, os.environ['BOT_USER'], os.environ['BOT_PASS'])
edits = 0
post = bot.post


def counting_post(action, *args, **kwargs):
    global edits
    if action == 'edit':
        edits += 1
    return post(action, *args, **kwargs)


bot.post = counting_post

first = bot.pages[title].text()
other = site(other_host, os.environ['OTHER_USER'], os.environ['OTHER_PASS'])
other.pages[title].edit('changed by someone else', summary='wikiedge test: the other user')

# The bot's read-modify-write, as mwclient's documentation writes it.
page = bot.pages[title]
seen = page.text()
error = None
try:
    result = page.edit(seen + ' + bot', summary='wikiedge test: the bot')['result']
except mwclient.errors.EditError as e:
    result, error = 'EditError', str(e)
except mwclient.errors.APIError as e:
    result, error = 'APIError', e.code
final = bot.pages[title].text(cache=False)
print(json.dumps({'first': first, 'seen': seen, 'result': result, 'error': error, 'edits': edits, 'final': final}))
