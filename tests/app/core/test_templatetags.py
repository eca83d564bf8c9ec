"""The figures' template filters say what the numbers say."""

from django.template import Context, Template
from django.test import SimpleTestCase


def render(text: str, **context) -> str:
    return Template("{% load review %}" + text).render(Context(context))


class PValueTests(SimpleTestCase):
    def test_it_writes_three_decimals(self):
        self.assertEqual(render("{{ p|p_value }}", p=0.58123), "p = 0.581")

    def test_it_never_writes_a_p_value_of_zero(self):
        self.assertEqual(render("{{ p|p_value }}", p=0.00002), "p &lt; 0.001")
        self.assertEqual(render("{{ p|p_value }}", p=0.0), "p &lt; 0.001")

    def test_it_rounds_to_one_thousandth_at_the_edge(self):
        self.assertEqual(render("{{ p|p_value }}", p=0.0005), "p = 0.001")
