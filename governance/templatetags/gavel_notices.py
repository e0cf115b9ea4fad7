"""The admin home's *Drafts waiting* panel (governance.admin.notices.waiting) for the person looking."""
from django import template

from governance.admin import notices

register = template.Library()


@register.simple_tag(takes_context=True)
def drafts_waiting(context):
    """Submitted drafts for those who may publish, one's drafts sent back, recently published ones."""
    request = context.get("request")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"shown": False}
    return notices.waiting(user)
