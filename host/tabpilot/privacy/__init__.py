"""What the model may not see: the user's secrets (typed by name, never shown) and masked personal data
(shown as placeholders, typed back as the real value). `guard.PrivacyGuard` is the one object a task
uses at both boundaries: page text → model, and model text → page."""
