// Marks the document as scripted; changes nothing that shows.
document.documentElement.setAttribute("data-scripted", "yes");
