"""The one session engine every protocol dialect adapts onto."""
