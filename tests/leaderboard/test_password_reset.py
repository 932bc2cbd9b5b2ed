"""Password reset by e-mail through a real SMTP server on 127.0.0.1 (aiosmtpd), in a real browser:
the link arrives and works; when the server is down or refuses the message the page says so (the
same for every address), and a site without e-mail says that up front."""

from __future__ import annotations

import re
from collections.abc import Iterator
from email import message_from_bytes
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from tests.browser import DEFAULT_PASSWORD, screenshot
from tests.embedded_load import free_port
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


class Mailbox:
    """An aiosmtpd handler keeping what it accepts; ``refuse`` answers 550 to every recipient."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.refuse = False

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: Any) -> str:
        if self.refuse:
            return "550 5.1.1 Mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append((envelope.rcpt_tos, message_from_bytes(envelope.content)))
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp(settings: Any) -> Iterator[Mailbox]:
    mailbox = Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 5
    yield mailbox
    controller.stop()


def _ask(page: Any, address: str) -> None:
    page.goto("/accounts/login/")
    page.click("text=Reset it")
    page.fill("input[name=email]", address)
    page.click("button[type=submit]")


def test_the_link_arrives_and_sets_a_new_password(browser_page: Any, smtp: Mailbox) -> None:
    UserFactory(username="forgetful", email="forgetful@example.org")
    page = browser_page
    _ask(page, "forgetful@example.org")
    page.wait_for_url("**/password_reset/done/")
    assert "on its way" in page.inner_text("#reset-sent")
    [(recipients, message)] = smtp.messages
    assert recipients == ["forgetful@example.org"]
    link = re.search(r"https?://\S+/accounts/reset/\S+/", message.get_payload())
    assert link is not None, message.get_payload()

    page.goto(link.group(0).split("/accounts/", 1)[1].join(["/accounts/", ""]))
    page.fill("input[name=new_password1]", "a-brand-new-passphrase-42")
    page.fill("input[name=new_password2]", "a-brand-new-passphrase-42")
    page.click("button[type=submit]")
    assert "Your new password is set" in page.inner_text("#reset-complete")
    page.click("#reset-complete >> text=Log in")
    page.fill("input[name=username]", "forgetful")
    page.fill("input[name=password]", "a-brand-new-passphrase-42")
    page.click("form.stacked button[type=submit]")
    page.wait_for_url("**/dashboard/")


def test_a_mail_server_that_is_down_is_reported_the_same_for_every_address(
    browser_page: Any, smtp: Mailbox, settings: Any
) -> None:
    UserFactory(username="forgetful", email="forgetful@example.org", password=DEFAULT_PASSWORD)
    settings.EMAIL_PORT = free_port()  # nothing listens there
    page = browser_page
    texts = []
    for address in ("forgetful@example.org", "nobody@example.org"):
        _ask(page, address)
        assert "/password_reset/done/" not in page.url
        texts.append(page.inner_text("ul.errorlist[role=alert]"))
    screenshot(page, "password-reset-server-down")
    # The server is reached before any account is looked up: the page says nothing about which exist.
    assert texts[0] == texts[1]
    assert "could not send the e-mail" in texts[0] and "Nothing was changed" in texts[0]


def test_a_refused_message_is_reported(browser_page: Any, smtp: Mailbox) -> None:
    UserFactory(username="forgetful", email="forgetful@example.org", password=DEFAULT_PASSWORD)
    smtp.refuse = True
    page = browser_page
    _ask(page, "forgetful@example.org")
    assert "/password_reset/done/" not in page.url
    assert "could not send the e-mail" in page.inner_text("ul.errorlist[role=alert]")
    assert not smtp.messages


def test_a_site_without_email_says_so(browser_page: Any, settings: Any) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"
    page = browser_page
    page.goto("/accounts/password_reset/")
    assert "passwords cannot be reset here" in page.inner_text("#reset-unavailable")
    assert page.locator("input[name=email]").count() == 0
